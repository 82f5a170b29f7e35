import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Socket } from 'node:net';
import { RatchetError } from '../../core/errors.js';
import { hardenedConfigArgs } from './hardening.js';

/** One object as `git cat-file --batch` gives it. */
export interface BatchObject {
  type: string;
  content: Buffer;
}

interface Request {
  spec: string;
  resolve: (object: BatchObject | null) => void;
  reject: (error: Error) => void;
}

/**
 * One `git cat-file --batch` process answering object questions (`<commit>:<path>`) for as long
 * as its owner needs it: each answer is a line written to a pipe, not a process started (each
 * costs a large parent process about a millisecond of its own CPU, and a pool asks for the files
 * of every stage). Questions are answered in order. The process starts with the first question,
 * runs hardened as every git command (`hardening.ts`), holds the event loop only while a
 * question waits, and ends with `close()` (or its owner's process: it reads its questions from
 * a pipe, and exits at its end). A process that died is started again by the next question.
 *
 * Names are resolved when asked, in `cwd`'s repository: give commit ids rather than refs that
 * may move (git may keep what it read of refs). Objects written after it started are found (git
 * looks for a missing object again, packs included).
 */
export class ObjectReader implements AsyncDisposable {
  #child: ChildProcessWithoutNullStreams | undefined;
  #buffer: Buffer = Buffer.alloc(0);
  readonly #waiting: Request[] = [];
  /** The process `close()` waits for: held until it is gone. */
  #closing: ChildProcessWithoutNullStreams | undefined;

  constructor(
    readonly cwd: string,
    private readonly env: Record<string, string>,
  ) {}

  /** The object `spec` names, or null when it names none. */
  read(spec: string): Promise<BatchObject | null> {
    // One question per line: a line break would make two.
    if (/[\r\n]/.test(spec))
      return Promise.reject(new RatchetError('git', `Invalid object name: ${JSON.stringify(spec)}`));
    return new Promise((resolve, reject) => {
      const child = this.#start();
      this.#waiting.push({ spec, resolve, reject });
      this.#hold(true);
      child.stdin.write(`${spec}\n`);
    });
  }

  /** Ends the process (the questions still waiting fail). */
  async close(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    // Held until it is gone: waiting on a process the event loop does not hold would end Node.
    this.#closing = child;
    this.#hold(true);
    child.stdin.end();
    await exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #start(): ChildProcessWithoutNullStreams {
    if (this.#child !== undefined) return this.#child;
    const child = spawn('git', [...hardenedConfigArgs(), 'cat-file', '--batch'], {
      cwd: this.cwd,
      env: this.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, as every git command (see `execProgram`).
      detached: true,
    });
    this.#child = child;
    this.#buffer = Buffer.alloc(0);
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      this.#answer();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    child.stdin.on('error', () => undefined);
    const fail = (reason: string): void => {
      if (this.#child === child) this.#child = undefined;
      const failure = new RatchetError(
        'git',
        `git cat-file --batch in ${this.cwd} ${reason}${stderr ? `: ${stderr.trim()}` : ''}`,
        {
          hint: 'Check that git is installed and on PATH, and that the directory exists.',
        },
      );
      for (const request of this.#waiting.splice(0)) request.reject(failure);
    };
    child.on('error', (error) => fail(`could not run: ${error.message}`));
    child.on('close', (code) => fail(`ended (exit ${String(code)})`));
    return child;
  }

  /** Resolves the questions whose whole answer has arrived. */
  #answer(): void {
    for (;;) {
      const request = this.#waiting[0];
      if (request === undefined) break;
      const end = this.#buffer.indexOf(0x0a);
      if (end < 0) break;
      const header = this.#buffer.subarray(0, end).toString('utf8');
      // `<name> missing` (or `ambiguous`): the name as asked, then the word.
      if (header === `${request.spec} missing` || header === `${request.spec} ambiguous`) {
        this.#buffer = this.#buffer.subarray(end + 1);
        this.#waiting.shift();
        request.resolve(null);
        continue;
      }
      // `<oid> <type> <size>`, the content, a line feed.
      const [, type = '', sizeText = ''] = header.split(' ');
      const size = Number(sizeText);
      if (!Number.isInteger(size) || size < 0) {
        this.#waiting.shift();
        request.reject(new RatchetError('git', `Unexpected answer of git cat-file --batch: ${header.slice(0, 200)}`));
        this.#child?.kill();
        break;
      }
      if (this.#buffer.length < end + 1 + size + 1) break;
      const content = Buffer.from(this.#buffer.subarray(end + 1, end + 1 + size));
      this.#buffer = this.#buffer.subarray(end + 1 + size + 1);
      this.#waiting.shift();
      request.resolve({ type, content });
    }
    if (this.#waiting.length === 0) this.#hold(false);
  }

  /** Holds the event loop open while a question waits; never otherwise. */
  #hold(waiting: boolean): void {
    const child = this.#child;
    if (child === undefined || (!waiting && child === this.#closing)) return;
    if (waiting) child.ref();
    else child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      // The pipes are sockets; only the answers' one needs holding while a question waits.
      if (!(stream instanceof Socket)) continue;
      if (waiting && stream === child.stdout) stream.ref();
      else stream.unref();
    }
  }
}
