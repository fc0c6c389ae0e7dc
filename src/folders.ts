/**
 * `mkdir -p`, made one folder at a time. Node's recursive mkdir loops for ever where the system
 * refuses a new folder with ENOENT although its parent exists (/proc, /sys); here that is the error.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

export function makeFolders(dir: string): void {
  const missing: string[] = [];
  let d = path.resolve(dir);
  while (!existsSync(d) && path.dirname(d) !== d) {
    missing.push(d);
    d = path.dirname(d);
  }
  // a file where a folder belongs: mkdir's own error (EEXIST naming it), as a recursive mkdir gives
  if (!statSync(d).isDirectory()) mkdirSync(d);
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}
