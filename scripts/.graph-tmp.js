const fs=require('fs'),path=require('path'),ts=require('typescript');
const root=path.resolve(process.argv[2]||'src');
const files=[];(function walk(d){for(const e of fs.readdirSync(d,{withFileTypes:true})){const p=path.join(d,e.name);if(e.isDirectory())walk(p);else if(/\.ts$/.test(e.name)&&!/\.spec\.ts$/.test(e.name)&&!p.includes('__fixtures__'))files.push(p);}})(root);
const folder=f=>{const r=path.relative(root,f).split(path.sep);return r.length>1?r[0]:'.'};
const edges={};
for(const f of files){const info=ts.preProcessFile(fs.readFileSync(f,'utf8'),true,true);for(const i of info.importedFiles){let s=i.fileName;let t;if(s.startsWith('@/'))t=path.join(root,s.slice(2));else if(s.startsWith('.'))t=path.resolve(path.dirname(f),s);else continue;const a=folder(f),b=folder(t+'.ts');if(a===b)continue;(edges[a]??={})[b]??=[];edges[a][b].push(path.relative(root,f)+' -> '+s);}}
for(const a of Object.keys(edges).sort())console.log(a,'->',Object.keys(edges[a]).sort().map(b=>b+'('+edges[a][b].length+')').join(' '));
// cycles via SCC
const nodes=new Set([...Object.keys(edges),...Object.values(edges).flatMap(o=>Object.keys(o))]);
let idx=0;const I={},L={},st=[],on={};const sccs=[];
function sc(v){I[v]=L[v]=idx++;st.push(v);on[v]=1;for(const w of Object.keys(edges[v]||{})){if(I[w]===undefined){sc(w);L[v]=Math.min(L[v],L[w])}else if(on[w])L[v]=Math.min(L[v],I[w])}if(L[v]===I[v]){const c=[];let w;do{w=st.pop();on[w]=0;c.push(w)}while(w!==v);if(c.length>1)sccs.push(c)}}
for(const v of nodes)if(I[v]===undefined)sc(v);
console.log('SCCs:',JSON.stringify(sccs));
if(process.argv[3])for(const a of Object.keys(edges))for(const b of Object.keys(edges[a]))if(process.argv[3].split(',').includes(a))console.log(edges[a][b].join('\n'));
