/**
 * `ratchet report <run> --trace`: the chain of a plan or solve run (seed 004's traceability:
 * run -> passes -> attempts -> validation -> every model call, with its full prompt and
 * response). A pass owns the events recorded between its `solve-pass-start` and
 * `solve-pass-end` (`startSeq`..`endSeq`): its model calls (precision grading included) and its
 * test runs are found by their event numbers. Plain text, pure over the ledger's rows.
 */
import { z } from 'zod';
import type { ModelCallRow, SolvePassRow, SolveTrace, VerificationRow } from '../ledger/types.js';

export interface SolveTraceInput {
  run: { id: string; workflow: string; feature: string; status: string };
  trace: SolveTrace;
  modelCalls: readonly ModelCallRow[];
  verifications: readonly VerificationRow[];
}

const StoredRequestSchema = z.looseObject({
  system: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown() })).optional(),
});
const StoredResponseSchema = z.looseObject({ text: z.string().optional() });

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content
    .map((part: unknown) =>
      typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string'
        ? part.text
        : JSON.stringify(part),
    )
    .join('\n');
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

function inPass(pass: SolvePassRow, next: SolvePassRow | undefined, seq: number): boolean {
  const end = pass.endSeq ?? (next ? next.startSeq - 1 : Number.POSITIVE_INFINITY);
  return seq > pass.startSeq && seq <= end;
}

function callText(call: ModelCallRow, number: number): string {
  const request = StoredRequestSchema.safeParse(call.request).data ?? {};
  const response = StoredResponseSchema.safeParse(call.response).data;
  const lines = [
    `    model call ${number} (${call.stage ?? '-'}, ${call.provider}/${call.model}, ${call.latencyMs} ms, tokens in ${call.inputTokens ?? '?'} out ${call.outputTokens ?? '?'})`,
    '      --- system',
    indent(request.system ?? '', '      '),
  ];
  for (const message of request.messages ?? []) {
    lines.push(`      --- ${message.role}`, indent(contentText(message.content), '      '));
  }
  if (call.error !== null) lines.push(`      --- error (${call.errorCode ?? '-'})`, indent(call.error, '      '));
  else lines.push('      --- response', indent(response?.text ?? JSON.stringify(call.response), '      '));
  return lines.join('\n');
}

function verificationText(row: VerificationRow): string {
  const counts = row.total === null ? '' : `: ${row.passed ?? 0} passed, ${row.failed ?? 0} failed`;
  const failing = row.failingTests.length > 0 ? `; failing ${row.failingTests.map((test) => test.id).join(', ')}` : '';
  const output = row.outputFile === null ? '' : ` (output: ${row.outputFile})`;
  return `    ${row.kind} \`${row.command}\` exit ${row.exitCode ?? 'none'}${row.timedOut ? ' (timed out)' : ''}${counts}${failing}${output}`;
}

/** The whole trace as text. */
export function renderSolveTrace(input: SolveTraceInput): string {
  const { run, trace } = input;
  const lines = [`Trace of ${run.workflow} run ${run.id} (${run.status}): ${run.feature}`];
  const progress = trace.progress;
  if (progress !== null) {
    lines.push(
      `  ${progress.mode}, ${progress.status}: ${progress.stepsCompleted} steps done, ${progress.stepsFailed} failed, ${progress.totalSteps} planned in ${progress.totalParts} parts`,
    );
  }
  if (trace.passes.length === 0) lines.push('  no pass was recorded');
  let callNumber = 0;
  trace.passes.forEach((pass, index) => {
    const next = trace.passes[index + 1];
    const where = [pass.partId, pass.stepId].filter((id) => id !== null).join('/');
    const outcome = pass.outcome ?? 'open (cut off)';
    lines.push(
      '',
      `pass ${pass.pass} ${pass.passType.toUpperCase()}${where ? ` ${where}` : ''} attempt ${pass.attempt}: ${outcome}`,
    );
    if (pass.reason !== null) lines.push(indent(pass.reason, '  | '));
    const context = pass.context;
    if (context !== null) {
      lines.push(
        `  context: stages ${context.stages.join(',')}; ${context.candidates} candidates; whole ${context.fullFiles.join(', ') || '-'}; signatures ${context.signatureFiles.join(', ') || '-'}; ~${context.promptTokens} of ${context.budgetTokens} prompt tokens`,
      );
    }
    for (const attempt of trace.attempts.filter((row) => row.pass === pass.pass)) {
      lines.push(
        `  attempt ${attempt.attempt} of ${attempt.stepId}: edits ${attempt.patchApplied ? `applied to ${attempt.files.join(', ')}` : 'not applied'}`,
      );
      const validation = attempt.validation;
      if (validation !== null) {
        const checks = [
          validation.lintOk === null ? null : `lint ${validation.lintOk ? 'ok' : 'failing'}`,
          validation.typecheckOk === null ? null : `typecheck ${validation.typecheckOk ? 'ok' : 'failing'}`,
        ].filter((text) => text !== null);
        lines.push(
          `  validation: tests ${validation.success ? 'pass' : 'fail'}${validation.failingTests.length > 0 ? ` (failing: ${validation.failingTests.join(', ')})` : ''}${checks.length > 0 ? `; ${checks.join('; ')}` : ''}`,
        );
      }
    }
    for (const row of input.verifications.filter((row) => inPass(pass, next, row.seq)))
      lines.push(verificationText(row));
    for (const call of input.modelCalls.filter((row) => inPass(pass, next, row.seq))) {
      lines.push(callText(call, ++callNumber));
    }
  });
  return lines.join('\n');
}
