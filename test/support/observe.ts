import { readFileSync } from 'node:fs';
import type { ServerProcess } from './server';

/** Resident memory of a process, now and at its peak since the last reset, in MB (Linux). */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** Resident memory of a process now, in MB (Linux). */
export function rssMb(pid: number): number {
  return memoryOf(pid).rssMb;
}

/** The queries a process ran for a dataset, from its `dataset query` log lines. */
export function executions(server: ServerProcess, dataset: string) {
  return server.logs.filter((line) => line.msg === 'dataset query' && line.dataset === dataset);
}

/** A counter of a process's Prometheus exposition (METRICS_PUBLIC is on). */
export async function counter(url: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}
