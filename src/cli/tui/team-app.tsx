/**
 * `ratchet team ui`: everything the `ratchet team` commands do, live in one screen. The
 * conversation streams with the phase and turn in a header; pending approvals are inline; a
 * help line names the keys of each view:
 *
 * - conversation: c continue, m answer the coach (`continue -m`), t more turns (`continue
 *   --max-turns`), ↑↓ a approve / d deny the selected write (a reason typed in), n advance
 *   (N `advance --force`, once `yes` is typed),
 *   w worktrees, p checkpoints, l the approvals so far (`approvals`), r start an iteration (`run`),
 *   g / G groom a topic (with the coach),
 *   q or Ctrl-C quit;
 * - worktrees: ↑↓ task, j/k scroll its diff, s setup, M merge, r refresh, Esc back;
 * - checkpoints: ↑↓, c create, r restore (y confirms), Esc back;
 * - grooming: c groom on, Esc back.
 *
 * It only renders and calls its ports; the ports persist through the team's stores. Quitting
 * stops what runs (`ports.stop`) and waits for it to end, so its lock is released and what was
 * said is kept before the TUI is gone; a second q leaves at once.
 */
import { Box, Text, useApp, useInput, useStdout, type Key } from 'ink';
import { useCallback, useEffect, useReducer, useRef } from 'react';
import { toRatchetError } from '../../core/errors.js';
import { stripControl } from '../terminal-text.js';
import { describeMerge, describeSetup } from './layer-text.js';
import { window } from './screen-lines.js';
import {
  ApprovalLogPane,
  ApprovalsPane,
  CheckpointsPane,
  ConversationPane,
  diffTextOf,
  reviewHeaderRows,
  ReviewPane,
} from './team-panes.js';
import { helpLines, promptText, statusText } from './team-screen-text.js';
import type { TeamUiPorts } from './team-ui-ports.js';
import { initialState, reduce, type Action, type Mode, type Prompt, type TeamUiState } from './team-ui-state.js';

export interface TeamAppProps {
  ports: TeamUiPorts;
  /** Terminal size when stdout does not say (tests). */
  size?: { columns: number; rows: number };
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
  /** Set on the first q: actions still queued do not start. */
  const quitting = useRef(false);

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
        if (quitting.current) return;
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
          await reload().catch(() => undefined);
        }
      });
    },
    [reload, dispatch],
  );

  useEffect(() => {
    act('Loading the iteration', () => Promise.resolve());
  }, [act]);

  /** Stops what runs and leaves once it ended (its lock released); a second quit leaves now. */
  const quit = (): void => {
    if (quitting.current) return exit();
    quitting.current = true;
    ports.stop();
    dispatch({ type: 'status', status: { kind: 'busy', what: 'Stopping what runs (q again leaves at once)' } });
    void queue.current.then(() => exit());
  };

  const converse = (answer: string | null, moreTurns: number | null = null): void => {
    act('The conversation', async (send) => {
      send({ type: 'notice', lines: [] });
      send({ type: 'status', status: { kind: 'running', speakers: [] } });
      const onText = (speaker: string, delta: string): void => send({ type: 'text', speaker, delta });
      for await (const event of ports.converse({ answer, moreTurns, onText })) send({ type: 'event', event });
    });
  };

  const groom = (topic: string, withCoach: boolean): void => {
    dispatch({ type: 'mode', mode: { kind: 'grooming', topic, withCoach, messages: [], turn: 0, maxTurns: 0 } });
    act('Grooming', async (send) => {
      send({ type: 'notice', lines: [] });
      send({ type: 'status', status: { kind: 'running', speakers: [] } });
      const onText = (speaker: string, delta: string): void => send({ type: 'text', speaker, delta });
      for await (const event of ports.groom({ topic, withCoach, onText })) send({ type: 'grooming-event', event });
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

  const checkpointsMode = async (): Promise<Mode> => {
    const checkpoints = await ports.listCheckpoints();
    return { kind: 'checkpoints', checkpoints, selected: Math.max(0, checkpoints.length - 1), confirming: false };
  };

  const openCheckpoints = (): void =>
    act('Checkpoints', async (send) => {
      send({ type: 'mode', mode: await checkpointsMode() });
    });

  /** `team advance`, or `advance --force` once confirmed. */
  const advance = (force: boolean): void =>
    act('Advance', async (send) => {
      send({ type: 'status', status: { kind: 'busy', what: 'Advancing the phase' } });
      send({ type: 'notice', lines: await ports.advance(force ? { force: true } : {}) });
      send({ type: 'status', status: { kind: 'idle' } });
    });

  /** Sends the line typed so far (read from `latest`: the keys of this same chunk included). */
  const submit = (): void => {
    const typing = latest.current.mode;
    if (typing.kind !== 'input') return;
    const text = typing.text.trim();
    const { prompt } = typing;
    dispatch({ type: 'mode', mode: { kind: 'conversation' } });
    switch (prompt.for) {
      case 'answer':
        return converse(text === '' ? null : text);
      case 'deny':
        return act('Deny', async (send) => {
          await ports.deny(prompt.approvalId, text === '' ? null : text);
          send({ type: 'notice', lines: [`Denied ${prompt.approvalId}.`] });
        });
      case 'turns': {
        const turns = Number(text);
        if (!Number.isInteger(turns) || turns < 1)
          return dispatch({ type: 'notice', lines: [`More turns: a positive whole number, not "${text}".`] });
        return converse(null, turns);
      }
      case 'start':
        if (text === '') return dispatch({ type: 'notice', lines: ['A new iteration needs a description.'] });
        act('Starting the iteration', async (send) => {
          send({ type: 'notice', lines: await ports.start(text) });
        });
        return converse(null);
      case 'groom':
        if (text === '') return dispatch({ type: 'notice', lines: ['Grooming needs a topic.'] });
        return groom(text, prompt.withCoach);
      case 'force':
        if (text.toLowerCase() !== 'yes') return dispatch({ type: 'notice', lines: ['Not advanced.'] });
        return advance(true);
      case 'checkpoint':
        return act('Checkpoint', async (send) => {
          const info = await ports.createCheckpoint(text === '' ? 'manual' : text);
          send({ type: 'mode', mode: await checkpointsMode() });
          send({ type: 'notice', lines: [`Checkpoint ${info.number} (${info.phase}): ${info.description}`] });
        });
    }
  };

  const ask = (prompt: Prompt): void => dispatch({ type: 'mode', mode: { kind: 'input', prompt, text: '' } });

  const onKey = (input: string, key: Key): void => {
    if (key.ctrl && input === 'c') return quit();
    const now = latest.current;
    const selected = now.approvals[now.selected];
    const { mode } = now;
    // Keys that arrived in one chunk (typed fast, pasted: `m` then the answer): one at a time, so
    // those after a key that opens a typed line go into it.
    if (input.length > 1 && mode.kind !== 'input') {
      for (const char of input) onKey(char, key);
      return;
    }
    switch (mode.kind) {
      case 'input': {
        // Esc goes back where the line was asked for: the checkpoints view for a checkpoint's description.
        if (key.escape)
          return mode.prompt.for === 'checkpoint'
            ? openCheckpoints()
            : dispatch({ type: 'mode', mode: { kind: 'conversation' } });
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
      case 'review': {
        const review = mode.review;
        if (key.escape || input === 'q') return dispatch({ type: 'mode', mode: { kind: 'conversation' } });
        if (review !== null && (key.upArrow || key.downArrow)) {
          const count = review.tasks.length;
          const task = (mode.task + (key.upArrow ? -1 : 1) + count) % count;
          return dispatch({ type: 'mode', mode: { ...mode, task, scroll: 0 } });
        }
        if (review !== null && (input === 'j' || key.pageDown)) {
          // Not past the diff's last window.
          const { total } = window(diffTextOf(review.tasks[mode.task]), columns - 1, 0, 0);
          const height = Math.max(1, bodyRowsOf(now, rows) + approvalRowsOf(now) - reviewHeaderRows(review));
          const scroll = Math.max(0, Math.min(mode.scroll + 10, total - height));
          return dispatch({ type: 'mode', mode: { ...mode, scroll } });
        }
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
      case 'checkpoints': {
        const chosen = mode.checkpoints[mode.selected];
        if (mode.confirming) {
          if (input !== 'y' || chosen === undefined)
            return dispatch({ type: 'mode', mode: { ...mode, confirming: false } });
          return act('Restore', async (send) => {
            const info = await ports.restoreCheckpoint(chosen.number);
            send({ type: 'mode', mode: { kind: 'conversation' } });
            send({ type: 'status', status: { kind: 'idle' } });
            send({
              type: 'notice',
              lines: [`Restored checkpoint ${info.number} (${info.phase}): ${stripControl(info.description)}`],
            });
          });
        }
        if (key.escape || input === 'q') return dispatch({ type: 'mode', mode: { kind: 'conversation' } });
        if (key.upArrow) return dispatch({ type: 'select', delta: -1 });
        if (key.downArrow) return dispatch({ type: 'select', delta: 1 });
        if (input === 'c') return ask({ for: 'checkpoint' });
        if (input === 'r' && chosen !== undefined)
          return dispatch({ type: 'mode', mode: { ...mode, confirming: true } });
        return;
      }
      case 'approvals':
        if (key.escape || input === 'q') return dispatch({ type: 'mode', mode: { kind: 'conversation' } });
        return;
      case 'grooming':
        if (key.escape || input === 'q') return dispatch({ type: 'mode', mode: { kind: 'conversation' } });
        if (input === 'c') return groom(mode.topic, mode.withCoach);
        return;
      case 'conversation':
        break;
    }
    if (input === 'q') return quit();
    if (input === 'r') return ask({ for: 'start' });
    if (input === 'g' || input === 'G') return ask({ for: 'groom', withCoach: input === 'G' });
    if (input === 'c') return converse(null);
    if (input === 'm') return ask({ for: 'answer' });
    if (input === 't') return ask({ for: 'turns' });
    if (input === 'p') return openCheckpoints();
    if (input === 'l')
      return act('Approvals', async (send) => {
        send({ type: 'mode', mode: { kind: 'approvals', approvals: await ports.listApprovals() } });
      });
    if (key.upArrow) return dispatch({ type: 'select', delta: -1 });
    if (key.downArrow) return dispatch({ type: 'select', delta: 1 });
    if (input === 'a' && selected !== undefined)
      return act('Approve', async (send) => {
        await ports.approve(selected.id);
        send({ type: 'notice', lines: [`Approved ${selected.id}: ${stripControl(selected.path)} written.`] });
      });
    if (input === 'd' && selected !== undefined) return ask({ for: 'deny', approvalId: selected.id });
    if (input === 'n') return advance(false);
    if (input === 'N') return ask({ for: 'force' });
    if (input === 'w')
      return act('Worktree review', async (send) => {
        send({ type: 'mode', mode: await reviewMode() });
      });
  };
  useInput(onKey);

  const { mode } = state;
  const status = statusText(state);
  const bodyRows = bodyRowsOf(state, rows);
  const layer = state.currentLayer === null ? '' : ` · layer ${state.currentLayer}`;
  const header =
    mode.kind === 'grooming'
      ? ` ratchet team · grooming "${stripControl(mode.topic)}" · turn ${mode.turn}/${mode.maxTurns} `
      : state.hasIteration
        ? ` ratchet team · ${stripControl(state.iterationId)} · phase ${state.phase} · turn ${state.turn}/${state.maxTurns}${layer} `
        : ' ratchet team · no iteration yet ';
  const approvalRows = approvalRowsOf(state);

  return (
    <Box flexDirection="column" width={columns}>
      <Box>
        <Text bold inverse>
          {header}
        </Text>
      </Box>
      {mode.kind === 'review' ? (
        <ReviewPane state={state} columns={columns} rows={bodyRows + approvalRows} />
      ) : mode.kind === 'checkpoints' ? (
        <CheckpointsPane state={state} rows={bodyRows + approvalRows} />
      ) : mode.kind === 'approvals' ? (
        <ApprovalLogPane state={state} rows={bodyRows + approvalRows} />
      ) : mode.kind === 'grooming' ? (
        <ConversationPane
          messages={mode.messages}
          streaming={state.streaming}
          columns={columns}
          rows={bodyRows + approvalRows}
        />
      ) : (
        <>
          <ConversationPane messages={state.messages} streaming={state.streaming} columns={columns} rows={bodyRows} />
          <ApprovalsPane state={state} />
        </>
      )}
      <Text color={status.colour} wrap="truncate">
        {mode.kind === 'checkpoints' && mode.confirming
          ? `Restore checkpoint ${mode.checkpoints[mode.selected]?.number ?? '?'}? The iteration's state becomes what it saved: y restores, any other key cancels.`
          : status.text}
      </Text>
      {state.notice.map((line, index) => (
        <Text key={index} wrap="truncate">
          {stripControl(line)}
        </Text>
      ))}
      {mode.kind === 'input' ? (
        <Text>
          {promptText(mode.prompt)}
          {mode.text}
          <Text inverse> </Text>
          <Text color="gray"> (Enter sends, Esc cancels)</Text>
        </Text>
      ) : (
        helpLines(state).map((line) => (
          <Text key={line} color="gray" wrap="truncate">
            {line}
          </Text>
        ))
      )}
    </Box>
  );
}

/** The pending approvals' rows under the conversation (the other views use them for themselves). */
function approvalRowsOf(state: TeamUiState): number {
  return state.approvals.length === 0 ? 0 : state.approvals.length + 1;
}

/** Rows left for the conversation: the header, status, notice and help lines take the rest. */
function bodyRowsOf(state: TeamUiState, rows: number): number {
  return Math.max(3, rows - 7 - approvalRowsOf(state) - state.notice.length);
}
