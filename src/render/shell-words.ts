/**
 * Words as a POSIX shell reads them back: a word of only safe characters as it is, any other in single
 * quotes (a quote inside as '\''), so that a command runlens suggests can be pasted as it is shown.
 */
export function shellWords(words: string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)).join(' ');
}
