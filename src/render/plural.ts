/** "1 node", "2 nodes", "0 errors": a count with its noun in agreement (the one place for it). */
export function plural(n: number, noun: string, many = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : many}`;
}
