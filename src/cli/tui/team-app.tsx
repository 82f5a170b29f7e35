/**
 * `ratchet team ui`: the team's conversation live, with the phase and turn in a header, the
 * pending approvals inline, and the worktree review of the current layer. Keys (shown at the
 * bottom): c continue, m answer the coach (continue -m), a / d approve / deny the selected
 * approval, n advance the phase, w worktrees (s setup, M merge, Esc back), q quit.
 *
 * It only renders and calls its ports; the ports persist through the team's stores.
 */
import { Box, Text, useApp, useInput, useStdout, type Key } from 'ink';
import { useCallback, useEffect, useReducer, useRef } from 'react';
import { toRatchetError } from '../../core/errors.js';
import { stripControl } from '../terminal-text.js';
import { conversationTail, window } from './screen-lines.js';
import type { TeamUiPorts } from './team-ui-ports.js';
import { initialState, reduce, type Action, type Mode, type TeamUiState } from './team-ui-state.js';
import { describeMerge, describeSetup } from './layer-text.js';

export interface TeamAppProps {
  ports: TeamUiPorts;
  /** Terminal size when stdout does not say (tests). */
  size?: { columns: number; rows: number };
}

const SPEAKER_COLOURS = ['cyan', 'yellow', 'blue', 'green', 'red'] as const;

function colourOf(speaker: string, state: TeamUiState): string {
  if (speaker === 'system') return 'gray';
  if (speaker === 'pm') return 'greenBright';
  const agents = [...new Set(state.messages.map((message) => message.from))].filter(
    (name) => name !== 'system' && name !== 'pm',
  );
  return SPEAKER_COLOURS[Math.max(0, agents.indexOf(speaker)) % SPEAKER_COLOURS.length] ?? 'white';
}

function statusText(state: TeamUiState): { text: string; colour: string } {
  const { status } = state;
  switch (status.kind) {
    case 'idle':
      return { text: 'Ready: c to continue the conversation.', colour: 'gray' };
    case 'running':
      return {
        text: status.speaker === null ? 'Starting…' : `${stripControl(status.speaker)} is speaking…`,
        colour: 'cyan',
      };
    case 'asked':
      return { text: `Coach asks: ${stripControl(status.question)}  (m to answer)`, colour: 'magenta' };
    case 'approvals':
      return {
        text: `Paused: ${status.pending} write(s) wait for approval (a approve, d deny, then c).`,
        colour: 'yellow',
      };
    case 'phase-complete':
      return { text: `Phase complete: ${stripControl(status.summary)}  (n to advance)`, colour: 'green' };
    case 'complete':
      return { text: `Conversation paused after ${status.turns} turns (c to go on, n to advance).`, colour: 'gray' };
    case 'busy':
      return { text: `${status.what}…`, colour: 'cyan' };
    case 'failed':
      return { text: stripControl(status.message), colour: 'red' };
  }
}

export function TeamApp({ ports, size }: TeamAppProps) {
  const [state, dispatchToReact] = useReducer(reduce, undefined, initialState);
  /**
   * The state as of the last action, ahead of React's next render: keys read it, so a key that
   * arrives before the screen caught up (typing fast, a key right after a pause) still sees
   * what the actions before it did.
   */
  const latest = useRef(state);
  const dispatch = useCallback((action: Action) => {
    latest.current = reduce(latest.current, action);
    dispatchToReact(action);
  }, []);
  const { exit } = useApp();
  const { stdout } = useStdout();
  const columns = size?.columns ?? stdout.columns ?? 100;
  const rows = size?.rows ?? stdout.rows ?? 30;
  const queue = useRef(Promise.resolve());

  const reload = useCallback(async () => {
    dispatch({ type: 'snapshot', snapshot: await ports.snapshot() });
  }, [ports, dispatch]);

  /**
   * Runs one action after those before it (a key pressed while the conversation still runs waits
   * for it rather than being lost), its failure shown rather than thrown; then reloads the
   * iteration from its files, which the action changed through the stores. What the action says
   * (its notice) shows only after that reload, so that a key pressed on reading it acts on the
   * state it describes (approving one write, then denying the next).
   */
  const act = useCallback(
    (what: string, body: (send: (action: Action) => void) => Promise<void>): void => {
      queue.current = queue.current.then(async () => {
        try {
          const said: Action[] = [];
          await body((action) => {
            if (action.type === 'notice' && action.lines.length > 0) said.push(action);
            else dispatch(action);
          });
          await reload();
          for (const action of said) dispatch(action);
        } catch (error) {
          const failure = toRatchetError(error);
          dispatch({ type: 'status', status: { kind: 'failed', message: `${what}: ${failure.message}` } });
          if (failure.hint) dispatch({ type: 'notice', lines: [failure.hint] });
        }
      });
    },
    [reload, dispatch],
  );

  useEffect(() => {
    act('Loading the iteration', () => Promise.resolve());
  }, [act]);

  const converse = (answer: string | null): void => {
    act('The conversation', async (send) => {
      send({ type: 'notice', lines: [] });
      send({ type: 'status', status: { kind: 'running', speaker: null } });
      for await (const event of ports.converse(answer)) send({ type: 'event', event });
    });
  };

  /** The worktree review of the current layer, or why there is none yet. */
  const reviewMode = async (): Promise<Mode> => {
    try {
      return { kind: 'review', review: await ports.reviewLayer(), problem: null, task: 0, scroll: 0 };
    } catch (error) {
      return { kind: 'review', review: null, problem: toRatchetError(error).message, task: 0, scroll: 0 };
    }
  };

  const onKey = (input: string, key: Key): void => {
    const now = latest.current;
    const selected = now.approvals[now.selected];
    const { mode } = now;
    // Keys that arrived in one chunk (typed fast, pasted: `m` then the answer): one at a time, so
    // those after a key that opens the answer line are typed into it.
    if (input.length > 1 && mode.kind !== 'answer' && mode.kind !== 'deny') {
      for (const char of input) onKey(char, key);
      return;
    }
    if (mode.kind === 'answer' || mode.kind === 'deny') {
      if (key.escape) return dispatch({ type: 'mode', mode: { kind: 'conversation' } });
      /** Sends the text typed so far (read from `latest`: the keys of this same chunk included). */
      const submit = (): void => {
        const typing = latest.current.mode;
        if (typing.kind !== 'answer' && typing.kind !== 'deny') return;
        const text = typing.text.trim();
        dispatch({ type: 'mode', mode: { kind: 'conversation' } });
        if (typing.kind === 'answer') return converse(text === '' ? null : text);
        const id = typing.approvalId;
        act('Deny', async (send) => {
          await ports.deny(id, text === '' ? null : text);
          send({ type: 'notice', lines: [`Denied ${id}.`] });
        });
      };
      if (key.return) return submit();
      if (key.backspace || key.delete) return dispatch({ type: 'type', input: null });
      // Keys that arrive together (a paste, or text and Enter typed fast) come as one chunk: the
      // text up to a line break is typed, and the break sends it.
      const [line = '', ...after] = input.split(/\r\n|\r|\n/);
      // Through the reducer: keys that arrive before the next render each see the text before them.
      dispatch({ type: 'type', input: stripControl(line) });
      if (after.length > 0) submit();
      return;
    }
    if (mode.kind === 'review') {
      const review = mode.review;
      if (key.escape || input === 'q') return dispatch({ type: 'mode', mode: { kind: 'conversation' } });
      if (review !== null && (key.upArrow || key.downArrow)) {
        const count = review.tasks.length;
        const task = (mode.task + (key.upArrow ? -1 : 1) + count) % count;
        return dispatch({ type: 'mode', mode: { ...mode, task, scroll: 0 } });
      }
      if (input === 'j' || key.pageDown) return dispatch({ type: 'mode', mode: { ...mode, scroll: mode.scroll + 10 } });
      if (input === 'k' || key.pageUp)
        return dispatch({ type: 'mode', mode: { ...mode, scroll: Math.max(0, mode.scroll - 10) } });
      if (input === 's' || input === 'M' || input === 'r')
        return act(input === 'M' ? 'Merge' : input === 's' ? 'Setup' : 'Review', async (send) => {
          send({
            type: 'status',
            status: { kind: 'busy', what: input === 'M' ? 'Merging and verifying the layer' : 'Working' },
          });
          if (input === 's') send({ type: 'notice', lines: describeSetup(await ports.setupLayer()) });
          if (input === 'M') send({ type: 'notice', lines: describeMerge(await ports.mergeLayer()) });
          send({ type: 'mode', mode: await reviewMode() });
          send({ type: 'status', status: { kind: 'idle' } });
        });
      return;
    }
    if (input === 'q') return exit();
    if (input === 'c') return converse(null);
    if (input === 'm') return dispatch({ type: 'mode', mode: { kind: 'answer', text: '' } });
    if (key.upArrow) return dispatch({ type: 'select', delta: -1 });
    if (key.downArrow) return dispatch({ type: 'select', delta: 1 });
    if (input === 'a' && selected !== undefined)
      return act('Approve', async (send) => {
        await ports.approve(selected.id);
        send({ type: 'notice', lines: [`Approved ${selected.id}: ${stripControl(selected.path)} written.`] });
      });
    if (input === 'd' && selected !== undefined)
      return dispatch({ type: 'mode', mode: { kind: 'deny', approvalId: selected.id, text: '' } });
    if (input === 'n')
      return act('Advance', async (send) => {
        send({ type: 'status', status: { kind: 'busy', what: 'Advancing the phase' } });
        send({ type: 'notice', lines: await ports.advance() });
        send({ type: 'status', status: { kind: 'idle' } });
      });
    if (input === 'w')
      return act('Worktree review', async (send) => {
        send({ type: 'mode', mode: await reviewMode() });
      });
  };
  useInput(onKey);

  const { mode } = state;
  const status = statusText(state);
  const approvalRows = state.approvals.length === 0 ? 0 : state.approvals.length + 1;
  const noticeRows = state.notice.length;
  const bodyRows = Math.max(3, rows - 6 - approvalRows - noticeRows);
  const layer = state.currentLayer === null ? '' : ` · layer ${state.currentLayer}`;

  return (
    <Box flexDirection="column" width={columns}>
      <Box>
        <Text bold inverse>
          {` ratchet team · ${stripControl(state.iterationId)} · phase ${state.phase} · turn ${state.turn}/${state.maxTurns}${layer} `}
        </Text>
      </Box>
      {mode.kind === 'review' ? (
        <ReviewPane state={state} columns={columns} rows={bodyRows + approvalRows} />
      ) : (
        <>
          <Box flexDirection="column" height={bodyRows}>
            {conversationTail(state.messages, columns - 2, bodyRows).map((line, index) => (
              <Text key={index} wrap="truncate">
                {line.speaker === null ? (
                  ' '.repeat(2)
                ) : (
                  <Text bold color={colourOf(line.speaker, state)}>
                    {line.speaker}:{' '}
                  </Text>
                )}
                {line.text}
              </Text>
            ))}
          </Box>
          {state.approvals.length > 0 && (
            <Box flexDirection="column">
              <Text color="yellow">Pending approvals ({state.approvals.length}):</Text>
              {state.approvals.map((approval, index) => (
                <Text key={approval.id} wrap="truncate" inverse={index === state.selected}>
                  {`${index === state.selected ? '▸' : ' '} ${stripControl(approval.id)}  ${stripControl(approval.agent)} → ${stripControl(approval.path)} (${approval.content.length} bytes)`}
                </Text>
              ))}
            </Box>
          )}
        </>
      )}
      <Text color={status.colour} wrap="truncate">
        {status.text}
      </Text>
      {state.notice.map((line, index) => (
        <Text key={index} wrap="truncate">
          {stripControl(line)}
        </Text>
      ))}
      {mode.kind === 'answer' || mode.kind === 'deny' ? (
        <Text>
          {mode.kind === 'answer' ? 'Answer the coach: ' : `Why deny ${mode.approvalId}? `}
          {mode.text}
          <Text inverse> </Text>
          <Text color="gray"> (Enter sends, Esc cancels)</Text>
        </Text>
      ) : (
        <Text color="gray" wrap="truncate">
          {mode.kind === 'review'
            ? '↑↓ task · j/k scroll · s setup · M merge · r refresh · Esc back'
            : 'c continue · m answer · ↑↓ select · a approve · d deny · n advance · w worktrees · q quit'}
        </Text>
      )}
    </Box>
  );
}

function ReviewPane({ state, columns, rows }: { state: TeamUiState; columns: number; rows: number }) {
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
  const task = review.tasks[mode.task];
  const header = review.tasks.length + 1;
  const diffText =
    task === undefined || task.status === 'missing' ? '' : task.diff === '' ? '(no committed change)' : task.diff;
  const { lines, total } = window(diffText, columns - 1, mode.scroll, Math.max(1, rows - header - 1));
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
