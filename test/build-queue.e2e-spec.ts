import { runDist } from './support/dist';
import { REDIS_URL, uniqueName } from './support/services';

// Two queues with a worker each, as two server processes would have, on one Redis prefix.
const SCENARIO = `
const { Queue, Worker } = require('bullmq');
const { BullBuildQueue } = require('./dist/builds/bullmq-build-queue.js');
const { BuildsProcessor } = require('./dist/builds/builds.processor.js');
const { redisConnection } = require('./dist/builds/redis-connection.js');
const connection = redisConnection(process.env.REDIS_URL);
const prefix = process.env.REDIS_PREFIX;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  const events = [];
  const processes = [0, 1].map((n) => {
    const queue = new BullBuildQueue(new Queue('builds', { connection, prefix }));
    // The processor as the service has it, with a runner that records what it runs.
    const processor = new BuildsProcessor({
      run: async (job) => {
        events.push({ process: n, job: job.buildId, at: 'start', t: Date.now() });
        await sleep(300);
        events.push({ process: n, job: job.buildId, at: 'end', t: Date.now() });
        if (job.buildId === 'fails') throw new Error('model broken: syntax error');
      },
    });
    const worker = new Worker('builds', (job) => processor.process(job), { connection, prefix, concurrency: 1 });
    return { queue, worker };
  });
  for (const p of processes) await p.queue.onModuleInit();
  const [a, b] = processes.map((p) => p.queue);
  const first = await a.submit({ buildId: 'one' });
  const refused = await b.submit({ buildId: 'two' });
  const busyDuring = await b.busy();
  await first.done;
  const busyAfter = await b.busy();
  const second = await b.submit({ buildId: 'three' });
  await second.done;
  const failing = await a.submit({ buildId: 'fails' });
  const failure = await failing.done.then(() => 'no error', (e) => e.message);
  const afterFailure = await b.submit({ buildId: 'four' });
  await afterFailure.done;
  const globalConcurrency = await a['queue'].getGlobalConcurrency();
  for (const p of processes) { await p.worker.close(); await p.queue.onApplicationShutdown(); await p.queue['queue'].obliterate({ force: true }); await p.queue['queue'].close(); }
  console.log(JSON.stringify({ first: first.accepted, refused: refused.accepted, busyDuring, busyAfter, second: second.accepted, failure, afterFailure: afterFailure.accepted, globalConcurrency, events }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

interface Outcome {
  first: boolean;
  refused: boolean;
  busyDuring: boolean;
  busyAfter: boolean;
  second: boolean;
  failure: string;
  afterFailure: boolean;
  globalConcurrency: number;
  events: { process: number; job: string; at: string; t: number }[];
}

describe('BullMQ builds queue on Redis', () => {
  it('runs one build at a time across processes and refuses a build while one is queued or running', async () => {
    const outcome = await runDist<Outcome>(SCENARIO, {
      REDIS_URL,
      REDIS_PREFIX: uniqueName('drey'),
    });
    expect(outcome).toMatchObject({
      first: true,
      refused: false,
      busyDuring: true,
      busyAfter: false,
      second: true,
      failure: 'model broken: syntax error',
      afterFailure: true,
      globalConcurrency: 1,
    });
    expect(outcome.events.map((e) => `${e.job}:${e.at}`)).toEqual([
      'one:start',
      'one:end',
      'three:start',
      'three:end',
      'fails:start',
      'fails:end',
      'four:start',
      'four:end',
    ]);
  });
});
