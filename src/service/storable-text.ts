/**
 * Text from outside the service as every store holds it. PostgreSQL text cannot hold a NUL character,
 * so text the service only records (an endpoint's answer, a step's output) keeps NUL as U+FFFD, the
 * mark bytes that are not UTF-8 get when decoded; text a client sends is refused instead (NUL_REFUSAL).
 * Both stores then behave alike.
 */
export const storableText = (s: string): string => s.replaceAll('\0', '\uFFFD');

export const NUL_REFUSAL = 'must not contain a NUL character';
