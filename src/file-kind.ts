/** What a path is when it is neither a regular file nor a folder, in words for messages. */
import type { Stats } from 'node:fs';

/** 'a FIFO (named pipe)', 'a character device', ...; undefined for a regular file, a folder or a link. */
export function otherFileKind(st: Stats): string | undefined {
  if (st.isFile() || st.isDirectory() || st.isSymbolicLink()) return undefined;
  return st.isFIFO() ? 'a FIFO (named pipe)' : st.isCharacterDevice() ? 'a character device' : st.isBlockDevice() ? 'a block device' : st.isSocket() ? 'a socket' : 'not a regular file';
}
