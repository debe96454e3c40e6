import { describe, expect, it } from 'vitest';
import { combineCpuUse, cpuUse, parseMachineTicks, parseProcessTicks, readCpuSample, roleOf, type CpuSample, type Role } from '../../bench/cpu.js';

// The bench's CPU figures (bench/cpu.ts): what each request cost the machine, and which process
// paid it, read from /proc around a measured run.

const procStat = (user: number, system: number, idle: number, steal: number) =>
  `cpu  ${user} 0 ${system} ${idle} 0 0 0 ${steal} 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345\n`;

const sample = (machine: string, processes: [number, number, Role][]): CpuSample => ({
  machine: parseMachineTicks(machine),
  processes: new Map(processes.map(([pid, ticks, role]) => [pid, { ticks, role }])),
});

describe('bench: CPU per request', () => {
  it('reads busy, steal and total ticks from the machine line of /proc/stat, not a per-core line', () => {
    expect(parseMachineTicks('cpu  100 5 40 800 10 2 3 7 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n')).toEqual({ busy: 150, steal: 7, total: 967 });
  });

  it('reads utime + stime of a process whose name holds spaces and parentheses', () => {
    // Fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
    const line = '4242 (node (worker) 1) S 1 4242 4242 0 -1 4194304 900 0 0 0 1234 567 0 0 20 0 11 0 100 0 0';
    expect(parseProcessTicks(line)).toEqual({ command: 'node (worker) 1', ticks: 1801 });
  });

  it('gives PostgreSQL its role by name, the server and its workers by pid, the bench as the load generator', () => {
    const roles = { serverPids: new Set([10, 11]), loadGeneratorPid: 20 };
    expect(roleOf(10, 'node', roles)).toBe('server');
    expect(roleOf(11, 'node', roles)).toBe('server');
    expect(roleOf(30, 'postgres', roles)).toBe('postgres');
    expect(roleOf(20, 'node', roles)).toBe('loadGenerator');
    expect(roleOf(40, 'redis-server', roles)).toBe('other');
  });

  it('divides the ticks used during the run by the requests answered, counting processes born during the run from zero', () => {
    const before = sample(procStat(1000, 500, 8000, 0), [[10, 300, 'server'], [30, 100, 'postgres'], [20, 50, 'loadGenerator']]);
    // 1 s on a 2-core machine: 200 ticks of core time, 150 busy, 10 stolen.
    const after = sample(procStat(1100, 550, 8040, 10), [[10, 380, 'server'], [30, 130, 'postgres'], [31, 10, 'postgres'], [20, 70, 'loadGenerator']]);
    const use = cpuUse(before, after, 1000)!;
    // A tick is 10 ms: 150 busy ticks over 1,000 requests is 1,500 µs each.
    expect(use.machineUsPerRequest).toBeCloseTo(1500);
    expect(use.serverUsPerRequest).toBeCloseTo(800);
    expect(use.postgresUsPerRequest).toBeCloseTo(400);
    expect(use.loadGeneratorUsPerRequest).toBeCloseTo(200);
    expect(use.busyShare).toBeCloseTo(150 / 200);
    expect(use.stealShare).toBeCloseTo(10 / 200);
  });

  it('has no figure for a run without requests', () => {
    const same = sample(procStat(1, 1, 1, 0), []);
    expect(cpuUse(same, same, 0)).toBeNull();
  });

  it('weights runs by their requests when the slices of a measurement are taken together', () => {
    const base = { serverUsPerRequest: 0, postgresUsPerRequest: 0, loadGeneratorUsPerRequest: 0, stealShare: 0 };
    const combined = combineCpuUse([
      { requests: 3000, cpu: { ...base, machineUsPerRequest: 100, serverUsPerRequest: 60, busyShare: 0.9 } },
      { requests: 1000, cpu: { ...base, machineUsPerRequest: 300, serverUsPerRequest: 100, busyShare: 0.7 } },
    ])!;
    expect(combined.machineUsPerRequest).toBeCloseTo(150);
    expect(combined.serverUsPerRequest).toBeCloseTo(70);
    expect(combined.busyShare).toBeCloseTo(0.8);
    expect(combineCpuUse([{ requests: 10, cpu: null }, { requests: 10, cpu: { ...base, machineUsPerRequest: 1, busyShare: 1 } }])).toBeNull();
  });

  it.runIf(process.platform === 'linux')('finds this test process among the processes of the machine', () => {
    const taken = readCpuSample(process.pid)!;
    expect(taken.processes.get(process.pid)?.role).toBe('server');
    expect(taken.machine.total).toBeGreaterThan(taken.machine.busy);
  });
});
