// CPU time spent per request during a measured run, by role (the server under test, PostgreSQL,
// the load generator), read from /proc before and after the run.
//
// Why: the load generator, the server and PostgreSQL share this machine's two cores, nearly
// saturated through every run, so requests per second say how fast the whole machine served them but
// not which process paid for what. These figures do: they show where a scenario's cost is (the
// service's Node process or PostgreSQL) and how it compares with its ceiling's, run by run. They
// also show this machine's drift: the same ceiling used 255 and 305 µs of CPU per request in two
// runs a minute apart (docs/performance-history.md, "CPU per request, …").
//
// Reads /proc only, never forks (a forked sampler would count itself). Linux only; elsewhere
// `readCpuSample` returns null and the bench prints no CPU figures.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { childPids } from './processes.js';

/** /proc reports times in USER_HZ ticks, 100 per second on Linux whatever the kernel's HZ. */
const ticksPerSecond = 100;

export type Role = 'server' | 'postgres' | 'loadGenerator' | 'other';

export interface CpuSample {
  /** Machine-wide ticks from the `cpu` line of /proc/stat. */
  machine: MachineTicks;
  /** Ticks used so far by each process, with its role. */
  processes: Map<number, { ticks: number; role: Role }>;
}

export interface MachineTicks {
  /** user + nice + system + irq + softirq: work done on this machine's cores. */
  busy: number;
  /** Time the hypervisor gave to other guests while this one had work. */
  steal: number;
  /** Everything, idle included. */
  total: number;
}

/** CPU microseconds per request of one measured run. */
export interface CpuUse {
  /** All processes of the machine: what the cores spent on each request. */
  machineUsPerRequest: number;
  serverUsPerRequest: number;
  postgresUsPerRequest: number;
  loadGeneratorUsPerRequest: number;
  /** Share of the machine's core time that was busy during the run (0 to 1). */
  busyShare: number;
  /** Share of core time the hypervisor took for other guests (0 to 1). */
  stealShare: number;
}

/** The `cpu` line of /proc/stat. */
export function parseMachineTicks(procStat: string): MachineTicks {
  const line = procStat.split('\n').find((row) => row.startsWith('cpu '));
  if (!line) throw new Error('no cpu line in /proc/stat');
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + irq + softirq, steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

/** Command name and utime + stime of /proc/<pid>/stat (the name may hold spaces and parentheses). */
export function parseProcessTicks(pidStat: string): { command: string; ticks: number } {
  const open = pidStat.indexOf('(');
  const close = pidStat.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`unreadable /proc/<pid>/stat: ${pidStat.slice(0, 60)}`);
  // Fields after the name start with field 3 (state); utime and stime are fields 14 and 15.
  const fields = pidStat.slice(close + 2).split(' ');
  return { command: pidStat.slice(open + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** The role of a process: PostgreSQL by its name, the server and its cluster workers by pid, this process as the load generator. */
export function roleOf(pid: number, command: string, roles: { serverPids: ReadonlySet<number>; loadGeneratorPid: number }): Role {
  if (command === 'postgres') return 'postgres';
  if (roles.serverPids.has(pid)) return 'server';
  if (pid === roles.loadGeneratorPid) return 'loadGenerator';
  return 'other';
}

/** A snapshot of every process's CPU time; null where /proc is missing (not Linux). */
export function readCpuSample(serverPid: number): CpuSample | null {
  if (!existsSync('/proc/stat')) return null;
  const roles = { serverPids: new Set([serverPid, ...descendants(serverPid)]), loadGeneratorPid: process.pid };
  const processes = new Map<number, { ticks: number; role: Role }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { command, ticks } = parseProcessTicks(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      processes.set(Number(entry), { ticks, role: roleOf(Number(entry), command, roles) });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return { machine: parseMachineTicks(readFileSync('/proc/stat', 'utf8')), processes };
}

/**
 * CPU per request between two samples. A process that started during the run counts from zero;
 * one that ended during it is missed (the bench's processes all outlive their runs).
 */
export function cpuUse(before: CpuSample, after: CpuSample, requests: number): CpuUse | null {
  if (requests <= 0) return null;
  const byRole: Record<Role, number> = { server: 0, postgres: 0, loadGenerator: 0, other: 0 };
  for (const [pid, now] of after.processes) {
    const used = now.ticks - (before.processes.get(pid)?.ticks ?? 0);
    if (used > 0) byRole[now.role] += used;
  }
  const machineTotal = after.machine.total - before.machine.total;
  const perRequestUs = (ticks: number) => (ticks / ticksPerSecond) * 1e6 / requests;
  return {
    machineUsPerRequest: perRequestUs(after.machine.busy - before.machine.busy),
    serverUsPerRequest: perRequestUs(byRole.server),
    postgresUsPerRequest: perRequestUs(byRole.postgres),
    loadGeneratorUsPerRequest: perRequestUs(byRole.loadGenerator),
    busyShare: machineTotal > 0 ? (after.machine.busy - before.machine.busy) / machineTotal : 0,
    stealShare: machineTotal > 0 ? (after.machine.steal - before.machine.steal) / machineTotal : 0,
  };
}

/** Requests-weighted CPU use of several runs (the slices of an interleaved measurement). */
export function combineCpuUse(runs: { cpu: CpuUse | null; requests: number }[]): CpuUse | null {
  if (runs.some((run) => run.cpu === null)) return null;
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  if (requests <= 0) return null;
  const weighted = (pick: (cpu: CpuUse) => number) => runs.reduce((sum, run) => sum + pick(run.cpu!) * run.requests, 0) / requests;
  return {
    machineUsPerRequest: weighted((cpu) => cpu.machineUsPerRequest),
    serverUsPerRequest: weighted((cpu) => cpu.serverUsPerRequest),
    postgresUsPerRequest: weighted((cpu) => cpu.postgresUsPerRequest),
    loadGeneratorUsPerRequest: weighted((cpu) => cpu.loadGeneratorUsPerRequest),
    // Shares of equally long runs: their plain mean.
    busyShare: runs.reduce((sum, run) => sum + run.cpu!.busyShare, 0) / runs.length,
    stealShare: runs.reduce((sum, run) => sum + run.cpu!.stealShare, 0) / runs.length,
  };
}

function descendants(pid: number): number[] {
  const children = childPids(pid);
  return [...children, ...children.flatMap(descendants)];
}
