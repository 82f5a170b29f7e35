/**
 * Issue 11, finding 13: what a model wrote (replies, tool input, test names) reaches the terminal
 * without any control sequence: OSC 52 (clipboard), CSI clear-screen, BEL and C1 bytes are gone,
 * their payload too, also when a streamed reply cuts a sequence between two deltas.
 */
import { describe, expect, it } from 'vitest';
import type { EventInput, RatchetEvent } from '../../src/core/events.js';
import { createOutput } from '../../src/cli/output.js';
import { createPlainReporter } from '../../src/cli/reporters/plain-reporter.js';
import { createStreamStripper, keepColoursOnly, stripControl } from '../../src/cli/terminal-text.js';

const OSC52 = '\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007';
const OSC52_ST = '\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u001b\\';
const CLEAR = '\u001b[2J\u001b[H';
const BELL = '\u0007';
const C1 = '\u009b2J\u009d52;c;Y3VybCBldmlsIHwgc2g=\u009c\u0085';
const ALL = `a${OSC52}b${OSC52_ST}c${CLEAR}d${BELL}e${C1}f\rg\u202eh`;

/** Control characters of C0 (but newline and tab), DEL and C1, and ESC. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('stripControl', () => {
  it('removes OSC 52, CSI, BEL, C1, carriage returns and bidi overrides, with their payloads', () => {
    expect(stripControl(ALL)).toBe('abcdefgh');
    expect(stripControl('line 1\n\tline 2')).toBe('line 1\n\tline 2');
  });

  it('removes an unterminated string sequence to the end', () => {
    expect(stripControl('kept \u001b]52;c;payload-without-end')).toBe('kept ');
  });

  it("keeps Ratchet's colours only where asked", () => {
    expect(keepColoursOnly(`\u001b[31mred\u001b[0m ${CLEAR}${OSC52}x`)).toBe('\u001b[31mred\u001b[0m x');
    expect(stripControl('\u001b[31mred\u001b[0m')).toBe('red');
  });
});

describe('createStreamStripper', () => {
  it('holds back a sequence cut between chunks, so none of its payload is shown', () => {
    for (let size = 1; size <= 7; size += 1) {
      const stream = createStreamStripper();
      let shown = '';
      for (let index = 0; index < ALL.length; index += size) shown += stream.push(ALL.slice(index, index + size));
      shown += stream.flush();
      expect(shown, `chunks of ${size}`).toBe('abcdefgh');
    }
  });
});

let seq = 0;
const event = (input: EventInput): RatchetEvent => ({
  ...input,
  id: `run:${++seq}`,
  runId: 'run',
  timestamp: '2026-01-01T00:00:00.000Z',
});

describe('the plain reporter and the output', () => {
  it("shows a model's text, tool input and test name without their controls", () => {
    const written: string[] = [];
    const sink = { write: (text: string) => written.push(text) > 0 };
    const output = createOutput(false, { stdout: sink, stderr: { ...sink, isTTY: true } });
    const report = createPlainReporter(output, {});
    for (let index = 0; index < ALL.length; index += 3)
      report(event({ type: 'model-delta', text: `reply ${ALL}`.slice(index, index + 3) }));
    report(
      event({
        type: 'tool-call',
        stage: 'RED',
        tool: 'Bash',
        input: { command: `echo ${ALL}` },
        output: ALL,
        isError: false,
        durationMs: 1,
      }),
    );
    report(event({ type: 'plan-select', cycle: 1, test: `test ${ALL}`, testFile: `t${OSC52}.js`, implFile: 'i.js' }));
    report(
      event({ type: 'checkpoint-create', stage: 'RED', phase: 'RED', commit: 'a'.repeat(40), subject: `test: ${ALL}` }),
    );
    const shown = written.join('');
    expect(shown).toContain('abcdefgh');
    expect(shown.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(CONTROL);
  });

  it("strips what reaches an output line from elsewhere (status, history), keeping Ratchet's colours", () => {
    const written: string[] = [];
    const sink = { write: (text: string) => written.push(text) > 0 };
    createOutput(false, { stdout: sink, stderr: { ...sink, isTTY: false } }).out(`\u001b[32m✓\u001b[39m ${ALL}`);
    expect(written.join('')).toBe('\u001b[32m✓\u001b[39m abcdefgh\n');
  });

  it('escapes the C1 characters JSON writes raw in --json lines', () => {
    const written: string[] = [];
    const sink = { write: (text: string) => written.push(text) > 0 };
    createOutput(true, { stdout: sink, stderr: { ...sink, isTTY: false } }).out(JSON.stringify({ test: ALL }));
    const line = written.join('');
    expect(line).not.toMatch(CONTROL);
    expect(JSON.parse(line)).toEqual({ test: ALL });
  });
});
