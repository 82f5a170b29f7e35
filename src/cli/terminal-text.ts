/**
 * Text a model wrote (its replies, tool input, test names, commit subjects and notes built from
 * them, test output) must not drive the user's terminal: an OSC 52 sequence writes the clipboard,
 * others set the title, clear the screen, move the cursor over earlier lines or hide text. Before
 * anything reaches the terminal, control characters go: C0 but newline and tab (carriage return
 * included: it rewrites the line shown), DEL, C1, and every escape sequence whole (CSI, OSC, DCS,
 * SOS, PM, APC and two-character ESC sequences, in their 7-bit and 8-bit forms; an unterminated
 * string sequence runs to the end of the text), and the bidirectional overrides that reorder
 * what is shown. Ratchet's own colours (SGR: `ESC [ ... m`) may be
 * kept where the line is Ratchet's.
 */

/**
 * One escape sequence or control character per match; group 1 is a complete SGR sequence
 * (`ESC [ 1;31 m`), the only kind that can be kept.
 */
const CONTROL = new RegExp(
  [
    // SGR (colours and styles), kept on request.
    String.raw`(\x1b\[[0-9;]*m)`,
    // OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \ or 0x9c), or to the end.
    String.raw`(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x9c\x1b]*(?:\x07|\x9c|\x1b\\|$)`,
    // CSI: parameters, intermediates and a final byte (or whatever of it there is).
    String.raw`(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?`,
    // Any other ESC sequence: intermediates and a final byte.
    String.raw`\x1b[\x20-\x2f]*[\x30-\x7e]?`,
    // Lone control characters: C0 but tab and newline, DEL, C1; and the bidirectional
    // overrides and isolates, which reorder what is shown ("Trojan Source").
    String.raw`[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]`,
  ].join('|'),
  'g',
);

/** `text` without any control character or escape sequence, newlines and tabs kept. */
export function stripControl(text: string): string {
  return text.replace(CONTROL, '');
}

/** `line` without control characters or escape sequences, but with its SGR colour sequences. */
export function keepColoursOnly(line: string): string {
  return line.replace(CONTROL, (match, sgr: string | undefined) => sgr ?? '');
}

/**
 * `--json` output: JSON escapes C0 characters, but writes DEL and C1 characters raw, which some
 * terminals act on. They can only stand inside JSON strings, where `\u009b` means the same.
 */
export function escapeJsonControl(line: string): string {
  return line.replace(/[\x7f-\x9f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Introducers of escape sequences: ESC and the 8-bit DCS, SOS, CSI, OSC, PM and APC. */
const INTRODUCER = /[\x1b\x90\x98\x9b\x9d\x9e\x9f]/g;
const COMPLETE_CSI = /^(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]/;
const COMPLETE_ESC = /^\x1b[\x20-\x2f]*[\x30-\x7e]/;
/** Longest unfinished sequence held back for the next chunk; a longer one is dropped. */
const MAX_CARRY = 4096;

/** Whether `tail`, which starts with an introducer, holds the whole sequence. */
function complete(tail: string): boolean {
  if (/^(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])/.test(tail)) return /[\x07\x9c]/.test(tail);
  if (/^(?:\x1b\[|\x9b)/.test(tail)) return COMPLETE_CSI.test(tail);
  return COMPLETE_ESC.test(tail);
}

/**
 * `stripControl` for text that arrives in pieces (a streamed reply): a sequence cut between two
 * pieces is held back until it is whole, so none of it, its payload included, is shown.
 * `flush()` returns what is held back at the end, stripped.
 */
export function createStreamStripper(): { push(chunk: string): string; flush(): string } {
  let carry = '';
  return {
    push(chunk) {
      const text = carry + chunk;
      carry = '';
      const starts = [...text.matchAll(INTRODUCER)];
      const last = starts.at(-1)?.index;
      if (last !== undefined && text.length - last <= MAX_CARRY && !complete(text.slice(last))) {
        carry = text.slice(last);
        return stripControl(text.slice(0, last));
      }
      return stripControl(text);
    },
    flush() {
      const rest = stripControl(carry);
      carry = '';
      return rest;
    },
  };
}

/** A JSON-like value with control characters stripped from every string (object keys included). */
export function stripControlDeep<T>(value: T): T {
  return stripUnknown(value) as T;
}

function stripUnknown(value: unknown): unknown {
  if (typeof value === 'string') return stripControl(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(stripUnknown);
  if (value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [stripControl(key), stripUnknown(item)]));
}
