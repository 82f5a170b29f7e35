/**
 * The baseline of `tdd-overhead`: a plain script that performs the same effects as a recorded
 * Ratchet run, without Ratchet. Run by `bench/tdd-overhead.ts` as a plain `node` process:
 * `node bench/tdd-plain-side.ts <job.json> <result.json>`.
 *
 * It walks the run's stored events in order and does only their effects in a fresh copy of the
 * kata: Write/Edit tool calls change files, the agent's Bash commands and every test run
 * (`verify-end`) run through `/bin/sh -c`, checkpoints are `git add -A` + `git commit` and notes
 * `git notes add`, and rejected attempts are discarded (`reset --hard` + `clean -fd`) where
 * Ratchet discards them. After an accepted GREEN the test-list item is ticked, as Ratchet does.
 *
 * Node runs this file by stripping its types, so it imports nothing but `node:` modules and
 * types (`import type` only: it is erased).
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { RatchetEvent } from '../src/core/events.js';

export interface PlainSideJob {
  /** A fresh copy of the kata with its initial commit. */
  repo: string;
  /** The Ratchet run's base commit: the bottom of the checkpoint stack. */
  baseCommit: string;
  events: RatchetEvent[];
}

export interface PlainSideResult {
  wallMs: number;
  testRuns: number;
  testMs: number;
  bashRuns: number;
  bashMs: number;
  commits: number;
  gitCommands: number;
  /** Median wall time of one `git rev-parse HEAD` spawned from this process. */
  gitSpawnMs: number;
}

const NOTES_REF = 'refs/notes/tdd-handoffs';
/** Only PLAN and GREEN drop a rejected attempt's changes; RED_FIX builds on what RED left. */
const DISCARDING_STAGES = new Set(['PLAN', 'GREEN']);

interface Exit {
  code: number | null;
  output: string;
  durationMs: number;
}

function run(file: string, args: readonly string[], cwd: string): Promise<Exit> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, output: Buffer.concat(chunks).toString('utf8'), durationMs: performance.now() - started }),
    );
  });
}

function field(input: unknown, key: string): unknown {
  return typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[key] : undefined;
}

function text(input: unknown, key: string): string {
  const value = field(input, key);
  if (typeof value !== 'string') throw new Error(`Tool input has no string "${key}": ${JSON.stringify(input)}`);
  return value;
}

/** `[ ]` -> `[x]` on the item's line of `test-list.md`. */
function tick(markdown: string, item: string): string {
  const lines = markdown.split('\n');
  const index = lines.findIndex((line) => /^\s*[-*+]\s+\[ \]\s+(.*\S)\s*$/.exec(line)?.[1] === item);
  const line = lines[index];
  if (line === undefined) return markdown;
  lines[index] = line.replace('[ ]', '[x]');
  return lines.join('\n');
}

async function replay(job: PlainSideJob): Promise<Omit<PlainSideResult, 'gitSpawnMs'>> {
  const { repo } = job;
  const totals = { testRuns: 0, testMs: 0, bashRuns: 0, bashMs: 0, commits: 0, gitCommands: 0 };
  const git = async (...args: string[]): Promise<void> => {
    totals.gitCommands++;
    const result = await run('git', args, repo);
    if (result.code !== 0)
      throw new Error(`git ${args[0] ?? ''} failed (exit ${String(result.code)}): ${result.output}`);
  };
  const sh = (command: string): Promise<Exit> => run('/bin/sh', ['-c', command], repo);
  // Ratchet's commits, bottom to top, so that rollbacks and notes map onto this repository's.
  const stack: string[] = [job.baseCommit];
  const relative = (commit: string): string => {
    const index = stack.lastIndexOf(commit);
    if (index < 0) throw new Error(`Commit ${commit} is not one of the run's checkpoints.`);
    return `HEAD~${stack.length - 1 - index}`;
  };
  let currentTest: string | null = null;

  const started = performance.now();
  for (const event of job.events) {
    switch (event.type) {
      case 'tool-call': {
        if (event.tool === 'Write' && !event.isError) {
          const file = join(repo, text(event.input, 'file_path'));
          await mkdir(dirname(file), { recursive: true });
          await writeFile(file, text(event.input, 'content'));
        } else if (event.tool === 'Edit' && !event.isError) {
          const file = join(repo, text(event.input, 'file_path'));
          const before = text(event.input, 'old_string');
          const after = text(event.input, 'new_string');
          if (before === '') {
            await mkdir(dirname(file), { recursive: true });
            await writeFile(file, after);
          } else {
            const content = await readFile(file, 'utf8');
            const all = field(event.input, 'replace_all') === true;
            await writeFile(file, all ? content.split(before).join(after) : content.replace(before, () => after));
          }
        } else if (event.tool === 'Bash') {
          const result = await sh(text(event.input, 'command'));
          totals.bashRuns++;
          totals.bashMs += result.durationMs;
        }
        break;
      }
      case 'plan-select':
        currentTest = event.test;
        break;
      case 'verify-end': {
        const result = await sh(event.result.command);
        if (event.kind === 'test' || event.kind === 'baseline') {
          totals.testRuns++;
          totals.testMs += result.durationMs;
        }
        break;
      }
      case 'stage-end':
        if (event.outcome === 'rejected' && DISCARDING_STAGES.has(event.stage)) {
          await git('reset', '--hard', '--quiet', 'HEAD');
          await git('clean', '-fd', '--quiet');
        }
        break;
      case 'checkpoint-create': {
        if (event.stage === 'GREEN' && currentTest !== null) {
          const list = join(repo, 'test-list.md');
          await writeFile(list, tick(await readFile(list, 'utf8'), currentTest));
        }
        await git('add', '-A');
        await git('commit', '--quiet', '--allow-empty', '--no-verify', '-m', event.subject);
        stack.push(event.commit);
        totals.commits++;
        break;
      }
      case 'note-write':
        await git(
          'notes',
          `--ref=${NOTES_REF}`,
          'add',
          '-f',
          '-m',
          JSON.stringify(event.state, null, 2),
          relative(event.commit),
        );
        break;
      case 'checkpoint-rollback': {
        const target = relative(event.to);
        stack.splice(stack.lastIndexOf(event.to) + 1);
        await git('reset', '--hard', '--quiet', target);
        await git('clean', '-fd', '--quiet');
        break;
      }
      default:
        break;
    }
  }
  return { ...totals, wallMs: performance.now() - started };
}

async function gitSpawnCost(cwd: string, probes = 15): Promise<number> {
  const times: number[] = [];
  for (let probe = 0; probe < probes; probe++)
    times.push((await run('git', ['rev-parse', '--verify', 'HEAD'], cwd)).durationMs);
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

const [jobFile, resultFile] = process.argv.slice(2);
if (jobFile === undefined || resultFile === undefined) {
  console.error('usage: node bench/tdd-plain-side.ts <job.json> <result.json>');
  process.exitCode = 2;
} else {
  const job = JSON.parse(await readFile(jobFile, 'utf8')) as PlainSideJob;
  const replayed = await replay(job);
  const result: PlainSideResult = { ...replayed, gitSpawnMs: await gitSpawnCost(job.repo) };
  await writeFile(resultFile, JSON.stringify(result));
}
