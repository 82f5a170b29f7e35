/**
 * Ratchet as a library: the same engine the CLI drives. A workflow is an async generator of
 * typed events (render them, or ignore them) that returns its outcome; every effect comes in
 * through `EngineServices` (`createEngineServices(ledger)` gives the real ones).
 *
 * ```ts
 * import { createEngineServices, loadConfig, openLedger, ledgerPath, startTdd } from 'ratchet';
 * const config = await loadConfig({ repoRoot, env: process.env, flags: { provider: 'anthropic', model } });
 * await using ledger = await openLedger(ledgerPath(repoRoot));
 * const run = startTdd({ repoRoot, feature: 'A stack', config, allowDirty: false }, createEngineServices(ledger));
 * let next = await run.next();
 * while (!next.done) {
 *   render(next.value); // stage-start, model-call, verify-end, checkpoint-create, ...
 *   next = await run.next();
 * }
 * const outcome = next.value; // { runId, status: 'completed' | 'failed' | 'interrupted', ... }
 * ```
 */

// Domain types, events and errors.
export type { RatchetEvent, EventType, EventOf, EventMap } from './core/events.js';
export { RatchetError, isRatchetError, type ErrorCode } from './core/errors.js';
export { HandoffStateSchema, NOTES_REF, type HandoffState, type TestCase } from './core/handoff.js';
export type {
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelMessage,
  ToolDefinition,
  TokenUsage,
} from './core/model.js';
export type { AgentRuntime, StageRequest, StageOutcome, PathPolicy } from './core/agent.js';
export type { Clock, IdGenerator } from './core/effects.js';
export type { ProcessRunner, CommandSpec, CommandResult } from './process/types.js';

// Configuration and prompts.
export { loadConfig, resolveRatchetHome, type LoadConfigOptions, type ConfigFlags } from './config/load.js';
export type { ResolvedConfig } from './config/resolved.js';
export { loadPrompts } from './config/prompts.js';

// Effects: git, processes, the ledger.
export { Git } from './git/git.js';
export { createProcessRunner } from './process/runner.js';
export { openLedger, secretsFromEnv, type Ledger } from './ledger/ledger.js';

// Models and agent runtimes.
export { createModelClient, type CreateModelClientOptions } from './llm/providers.js';
export { createReplayModelClient } from './llm/replay.js';
export { createToolLoopRuntime, type ToolLoopRuntimeOptions } from './agent/tool-loop-runtime.js';
export { createClaudeCodeRuntime, type ClaudeCodeRuntimeOptions } from './agent/claude-code-runtime.js';
export { BUILTIN_TOOLS } from './agent/tools/builtin-tools.js';
export { createFileGuard, type FileGuard } from './agent/file-guard.js';

// Verification and code intelligence.
export { detectTestCommand, type DetectedTestCommand } from './verify/detect.js';
export { runTests } from './verify/run-tests.js';
export { buildIndex, type BuildIndexOptions } from './code/index/build-index.js';
export { summarizeIndex, type IndexSummary } from './code/index/summary.js';
export { writeIndexArtifacts } from './code/index/artifacts.js';
export type { CodeIndex } from './code/index/types.js';

// Running workflows and deciding on runs.
export { createEngineServices, createIdGenerator, systemClock, type EngineServices } from './engine/effects.js';
export { ledgerPath, runDir, worktreePath } from './engine/run-paths.js';
export { startRun, type StartOptions, type StartServices } from './engine/start-run.js';
export { resumeRun, type ResumeOptions } from './engine/resume-run.js';
export type { RunOutcome } from './engine/run-process.js';
export { createWorkflowRegistry, type WorkflowRegistry } from './engine/registry.js';
// The contract of a workflow, for a definition of one's own (see README, Architecture).
export type {
  WorkflowDefinition,
  WorkflowTypes,
  Steps,
  RunContext,
  RunInfo,
  RunStart,
  RunProgress,
  CheckContext,
  Checked,
  SettleContext,
  AgentPort,
  ResumeSupport,
  ResumeContext,
  ResumePoint,
  NotedCheckpoint,
  ProgressCheckpoint,
  BackupSupport,
  RunBackup,
} from './workflows/definition.js';
export { tddWorkflow, type TddRequest } from './workflows/tdd/definition.js';
export { refactorWorkflow, type RefactorRequest } from './workflows/refactor/definition.js';
export {
  workflows,
  startTdd,
  resumeTdd,
  acceptRun,
  rejectRun,
  rollbackRun,
  repairNotes,
  type StartTddOptions,
  type ResumeTddOptions,
} from './library.js';
export type { PreparedRefactor } from './workflows/refactor/prepare.js';
export { resolveRun } from './engine/run-lookup.js';
export { checkpointsOf, type Checkpoint } from './engine/checkpoints.js';
export type { GitRun } from './engine/git-run.js';
export { writeRunReport, type WrittenReport } from './report/write-report.js';
