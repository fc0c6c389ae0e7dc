/**
 * Mouse input through the terminal's own reporting (xterm's button mode 1000 with SGR coordinates,
 * mode 1006): the wheel and clicks arrive as `ESC [ < button ; column ; row M` on stdin, which
 * ink hands to input handlers without the ESC.
 */

export interface MouseEvent {
  kind: 'wheelUp' | 'wheelDown' | 'click';
  /** 1-based terminal column and row */
  x: number;
  y: number;
}

export const MOUSE_ON = '\x1b[?1000h\x1b[?1006h';
export const MOUSE_OFF = '\x1b[?1000l\x1b[?1006l';

const SGR = /^\x1b?\[<(\d+);(\d+);(\d+)([Mm])$/;

/** The mouse event an input sequence reports, or undefined when it is not one (or one we ignore). */
export function parseMouse(input: string): MouseEvent | undefined | 'ignored' {
  const m = SGR.exec(input);
  if (!m) return undefined;
  const button = Number(m[1]);
  const x = Number(m[2]);
  const y = Number(m[3]);
  const press = m[4] === 'M';
  // bits 2-4 are modifier keys; 64 and 65 are the wheel
  const b = button & ~0b11100;
  if (b === 64) return { kind: 'wheelUp', x, y };
  if (b === 65) return { kind: 'wheelDown', x, y };
  if (b === 0 && press) return { kind: 'click', x, y };
  return 'ignored';
}

/** Rows the wheel moves a list by. */
export const WHEEL_ROWS = 3;
