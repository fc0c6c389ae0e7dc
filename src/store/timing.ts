/**
 * Step timings for profiling a load (`RUNLENS_TIMING=1`): wall and process CPU time on stderr. CPU
 * time is the steadier figure on a shared machine.
 */
export async function timed<T>(step: string, fn: () => Promise<T>): Promise<T> {
  if (!process.env.RUNLENS_TIMING) return fn();
  const t = performance.now();
  const c = process.cpuUsage();
  try {
    return await fn();
  } finally {
    const cpu = process.cpuUsage(c);
    process.stderr.write(`${step}: ${(performance.now() - t).toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms cpu (${(cpu.system / 1000).toFixed(0)} system)\n`);
  }
}
