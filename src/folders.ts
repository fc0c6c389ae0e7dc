/**
 * `mkdir -p`, made one folder at a time. Node's recursive mkdir loops for ever where the system
 * refuses a new folder with ENOENT although its parent exists (/proc, /sys); here that is the error.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

export function makeFolders(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !existsSync(d); d = path.dirname(d)) {
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}
