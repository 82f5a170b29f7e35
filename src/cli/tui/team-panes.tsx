/**
 * The TUI's panes, drawn from its state alone: the conversation (an iteration's or a grooming
 * session's), the pending approvals, the worktree review with its diff window, and the
 * checkpoints. Everything a model or a file wrote passes through `stripControl` (directly or
 * through `screen-lines.ts`).
 */
import { Box, Text } from 'ink';
import { stripControl } from '../terminal-text.js';
import type { LayerReview } from '../../engine/team/layer-worktrees.js';
import type { TeamMessage } from '../../workflows/team/types.js';
import { conversationTail, window } from './screen-lines.js';
import type { TeamUiState } from './team-ui-state.js';

const SPEAKER_COLOURS = ['cyan', 'yellow', 'blue', 'green', 'red'] as const;

function colourOf(speaker: string, messages: readonly TeamMessage[]): string {
  if (speaker === 'system') return 'gray';
  if (speaker === 'pm') return 'greenBright';
  const agents = [...new Set(messages.map((message) => message.from))].filter(
    (name) => name !== 'system' && name !== 'pm',
  );
  return SPEAKER_COLOURS[Math.max(0, agents.indexOf(speaker)) % SPEAKER_COLOURS.length] ?? 'white';
}

/** The conversation's last lines, with the replies still streaming after it (a cursor at their end). */
export function ConversationPane({
  messages,
  streaming,
  columns,
  rows,
}: {
  messages: readonly TeamMessage[];
  streaming: ReadonlyArray<{ speaker: string; text: string }>;
  columns: number;
  rows: number;
}) {
  const shown = [...messages, ...streaming.map(({ speaker, text }) => ({ from: speaker, content: `${text}▍` }))];
  return (
    <Box flexDirection="column" height={rows}>
      {conversationTail(shown, columns - 2, rows).map((line, index) => (
        <Text key={index} wrap="truncate">
          {line.speaker === null ? (
            ' '.repeat(2)
          ) : (
            <Text bold color={colourOf(line.speaker, messages)}>
              {line.speaker}:{' '}
            </Text>
          )}
          {line.text}
        </Text>
      ))}
    </Box>
  );
}

export function ApprovalsPane({ state }: { state: TeamUiState }) {
  if (state.approvals.length === 0) return null;
  return (
    <Box flexDirection="column">
      <Text color="yellow">Pending approvals ({state.approvals.length}):</Text>
      {state.approvals.map((approval, index) => (
        <Text key={approval.id} wrap="truncate" inverse={index === state.selected}>
          {`${index === state.selected ? '▸' : ' '} ${stripControl(approval.id)}  ${stripControl(approval.agent)} → ${stripControl(approval.path)} (${approval.content.length} bytes)`}
        </Text>
      ))}
    </Box>
  );
}

/** `team approvals`: each write that asked, newest last, with its decision and the reason given. */
export function ApprovalLogPane({ state, rows }: { state: TeamUiState; rows: number }) {
  const { mode } = state;
  if (mode.kind !== 'approvals') return null;
  const colour = { pending: 'yellow', approved: 'green', denied: 'red' } as const;
  return (
    <Box height={rows} flexDirection="column">
      <Text bold>{`Approvals of ${stripControl(state.iterationId)} (${mode.approvals.length})`}</Text>
      {mode.approvals.length === 0 && <Text color="gray">No write has asked for approval yet.</Text>}
      {mode.approvals.slice(-Math.max(1, rows - 1)).map((approval) => (
        <Text key={approval.id} wrap="truncate">
          {`${stripControl(approval.id).padEnd(5)} `}
          <Text color={colour[approval.status]}>{approval.status.padEnd(8)}</Text>
          {` ${stripControl(approval.agent)}: ${stripControl(approval.path)} (${approval.content.length} chars)${
            approval.reason === undefined ? '' : ` — ${stripControl(approval.reason)}`
          }`}
        </Text>
      ))}
    </Box>
  );
}

export function CheckpointsPane({ state, rows }: { state: TeamUiState; rows: number }) {
  const { mode } = state;
  if (mode.kind !== 'checkpoints') return null;
  const { checkpoints, selected } = mode;
  // The window of the list that keeps the selected one in view.
  const height = Math.max(1, rows - 1);
  const from = Math.max(0, Math.min(selected - height + 1, checkpoints.length - height));
  return (
    <Box height={rows} flexDirection="column">
      <Text bold>{`Checkpoints of ${stripControl(state.iterationId)} (${checkpoints.length})`}</Text>
      {checkpoints.length === 0 && <Text color="gray">No checkpoints yet: c saves one now.</Text>}
      {checkpoints.slice(from, from + height).map((checkpoint, index) => (
        <Text key={checkpoint.number} inverse={from + index === selected} wrap="truncate">
          {`${from + index === selected ? '▸' : ' '} ${String(checkpoint.number).padStart(3)}  ${checkpoint.phase.padEnd(16)} ${checkpoint.createdAt}  ${stripControl(checkpoint.description)}`}
        </Text>
      ))}
    </Box>
  );
}

/** The text the diff window shows for the selected task of a review. */
export function diffTextOf(task: LayerReview['tasks'][number] | undefined): string {
  if (task === undefined || task.status === 'missing') return '';
  const committed = task.diff === '' ? '(no committed change)' : task.diff.trimEnd();
  return task.pending === ''
    ? committed
    : `${committed}\n\nUncommitted in ${task.worktree} (the merge commits it):\n${task.pending}`;
}

/** Rows above the diff window: the title, one per task, the diff's own line. */
export function reviewHeaderRows(review: LayerReview): number {
  return review.tasks.length + 2;
}

export function ReviewPane({ state, columns, rows }: { state: TeamUiState; columns: number; rows: number }) {
  const { mode } = state;
  if (mode.kind !== 'review') return null;
  const review = mode.review;
  if (review === null)
    return (
      <Box height={rows} flexDirection="column">
        <Text wrap="truncate">{stripControl(mode.problem ?? 'No review yet.')}</Text>
        <Text color="gray">s sets up the worktrees of the current layer (one per task of tasks.json).</Text>
      </Box>
    );
  const { lines, total } = window(
    diffTextOf(review.tasks[mode.task]),
    columns - 1,
    mode.scroll,
    Math.max(1, rows - reviewHeaderRows(review)),
  );
  return (
    <Box height={rows} flexDirection="column">
      <Text bold>{`Layer ${review.layer} of ${review.iterationBranch} (base ${review.base.slice(0, 8)})`}</Text>
      {review.tasks.map((entry, index) => (
        <Text key={entry.id} inverse={index === mode.task} wrap="truncate">
          {`${index === mode.task ? '▸' : ' '} ${entry.id}  ${entry.status}${
            entry.status === 'missing'
              ? ''
              : `  ${entry.stat.files.length} file(s) +${entry.stat.added} -${entry.stat.deleted}${entry.uncommitted.length > 0 ? `  ${entry.uncommitted.length} uncommitted` : ''}`
          }`}
        </Text>
      ))}
      <Text color="gray">
        {total > lines.length ? `diff lines ${mode.scroll + 1}-${mode.scroll + lines.length} of ${total}` : 'diff'}
      </Text>
      {lines.map((line, index) => (
        <Text
          key={index}
          wrap="truncate"
          color={
            line.startsWith('+') ? 'green' : line.startsWith('-') ? 'red' : line.startsWith('@@') ? 'cyan' : undefined
          }
        >
          {line === '' ? ' ' : line}
        </Text>
      ))}
    </Box>
  );
}
