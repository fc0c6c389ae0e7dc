/**
 * A cut by length counts UTF-16 code units (String.length). Cut between the two halves of a character
 * outside the BMP (an emoji), text would end in a lone surrogate: JSON writes it as a `\ud83d` escape
 * that parsers refuse, and other output shows U+FFFD. The cut moves back before that character.
 */
export function cutText(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, max > 0 && code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
