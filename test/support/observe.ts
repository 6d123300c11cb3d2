import { readFileSync, readdirSync } from 'node:fs';
import type { ServerProcess } from './server';

/** Resident memory of a process, now and at its peak since the last reset, in MB (Linux). */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/**
 * Each thread of a process (Linux): its id, CPU ticks (utime + stime) and nice value, fields 14, 15 and 19
 * of its stat. A thread that ends while they are read is left out.
 */
export function threadsOf(pid: number): { id: number; ticks: number; nice: number }[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) => {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8')
        .split(') ')[1]
        .split(' ');
      return [
        {
          id: Number(task),
          ticks: Number(fields[11]) + Number(fields[12]),
          nice: Number(fields[16]),
        },
      ];
    } catch {
      return [];
    }
  });
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
