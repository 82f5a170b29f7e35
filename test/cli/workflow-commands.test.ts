/**
 * The lists a new workflow joins: `WORKFLOWS` (the engine's registry, the CLI, the library) and
 * the CLI's `COMMANDS`. A workflow listed without its command file, or a registry that misses a
 * listed workflow, is caught here rather than by a user whose runs cannot be started or read.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { loadWorkflowRegistry } from '../../src/engine/registry.js';
import { workflowRegistry } from '../../src/engine/shipped-registry.js';
import { WORKFLOW_LOADERS } from '../../src/workflows/loaders.js';
import { WORKFLOWS } from '../../src/workflows/index.js';

/** The program as `ratchet` builds it with every command file imported and registered. */
async function program(): Promise<Command> {
  const root = new Command('ratchet');
  const cli = { setExit: () => undefined, loadRegistry: loadWorkflowRegistry };
  for (const files of COMMANDS) for (const register of await files.load()) register(root, cli);
  return root;
}

/** The command words of a start command (`ratchet refactor run` -> `refactor`, `run`), arguments left out. */
function commandWords(startCommand: string): string[] {
  const [first, ...rest] = startCommand.split(' ');
  expect(first).toBe('ratchet');
  return rest.filter((word) => /^[a-z][a-z-]*$/.test(word));
}

describe('the workflows and their commands', () => {
  it('every workflow Ratchet ships has the command its startCommand names', async () => {
    const ratchet = await program();
    expect(WORKFLOWS.length).toBeGreaterThan(0);
    for (const workflow of WORKFLOWS) {
      let current: Command | undefined = ratchet;
      for (const word of commandWords(workflow.startCommand)) {
        current = current?.commands.find((command) => command.name() === word);
      }
      expect(current?.name(), `${workflow.name}: ${workflow.startCommand}`).toBe(
        commandWords(workflow.startCommand).at(-1),
      );
    }
  });

  it('the registry finds every listed workflow by the name its runs are recorded under, and refuses others', () => {
    const registry = workflowRegistry();
    for (const workflow of WORKFLOWS) expect(registry.of({ id: 'run', workflow: workflow.name })).toBe(workflow);
    let refusal: unknown;
    try {
      registry.of({ id: 'run-x', workflow: 'no-such-workflow' });
    } catch (error) {
      refusal = error;
    }
    expect(isRatchetError(refusal, 'internal') ? refusal.message : refusal).toContain(
      'Run run-x is a no-such-workflow run',
    );
  });

  it('the CLI loads the same workflows by name, only those of the runs it is given', async () => {
    expect(Object.keys(WORKFLOW_LOADERS).sort()).toEqual(WORKFLOWS.map((workflow) => workflow.name).sort());
    for (const workflow of WORKFLOWS) {
      const registry = await loadWorkflowRegistry([{ workflow: workflow.name }]);
      expect(registry.of({ id: 'run', workflow: workflow.name })).toBe(workflow);
      expect(registry.workflows).toEqual([workflow]);
    }
    expect((await loadWorkflowRegistry()).workflows).toHaveLength(WORKFLOWS.length);
    const refusal: unknown = await loadWorkflowRegistry([{ workflow: 'no-such-workflow' }]).then((registry) => {
      try {
        return registry.of({ id: 'run-x', workflow: 'no-such-workflow' });
      } catch (error) {
        return error;
      }
    });
    expect(isRatchetError(refusal, 'internal') ? refusal.hint : refusal).toContain(
      `Known workflows: ${Object.keys(WORKFLOW_LOADERS).join(', ')}.`,
    );
  });

  it('no two workflows share a name', () => {
    const names = WORKFLOWS.map((workflow) => workflow.name);
    expect(new Set(names).size).toBe(names.length);
  });
});
