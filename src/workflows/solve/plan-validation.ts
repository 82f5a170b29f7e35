/**
 * The checks a plan must pass before anything runs on it (seed 004, `validate_plan`): ids unique,
 * every dependency names an item that exists, no cycles. An adjustment may only revise the steps
 * that remain: it cannot bring back, rename over or undo a step already run. Each problem is a
 * sentence written for the model's retry prompt.
 */
import type { MetaPlan, PartPlan, PlanAdjustment, PlanStep } from './schemas.js';

interface Node {
  id: string;
  dependsOn: readonly string[];
}

/**
 * Problems of a dependency graph: duplicate ids, dependencies on unknown ids (those in `outside`
 * are allowed: steps already done), self-dependencies and cycles.
 */
function graphProblems(nodes: readonly Node[], noun: string, outside: ReadonlySet<string> = new Set()): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const node of nodes) {
    if (ids.has(node.id)) problems.push(`The ${noun} id "${node.id}" is used twice; ids must be unique.`);
    ids.add(node.id);
  }
  for (const node of nodes) {
    for (const dependency of node.dependsOn) {
      if (dependency === node.id) problems.push(`${capital(noun)} "${node.id}" depends on itself.`);
      else if (!ids.has(dependency) && !outside.has(dependency)) {
        problems.push(`${capital(noun)} "${node.id}" depends on "${dependency}", which is not a ${noun} of the plan.`);
      }
    }
  }
  if (problems.length > 0) return problems;
  const cycle = findCycle(nodes);
  if (cycle !== null) problems.push(`The ${noun}s depend on each other in a cycle: ${cycle.join(' -> ')}.`);
  return problems;
}

function capital(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** One dependency cycle (`a -> b -> a`), or null. */
function findCycle(nodes: readonly Node[]): string[] | null {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === 'done') return null;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    for (const dependency of byId.get(id)?.dependsOn ?? []) {
      if (!byId.has(dependency)) continue;
      const cycle = visit(dependency);
      if (cycle !== null) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return null;
  };
  for (const node of nodes) {
    const cycle = visit(node.id);
    if (cycle !== null) return cycle;
  }
  return null;
}

/**
 * The nodes in an order where each comes after its dependencies, otherwise as given (the
 * planner's order is its intent). The graph must be valid (`graphProblems` empty); dependencies
 * outside it count as met.
 */
export function dependencyOrder<T extends Node>(nodes: readonly T[]): T[] {
  const ids = new Set(nodes.map((node) => node.id));
  const placed = new Set<string>();
  const ordered: T[] = [];
  while (ordered.length < nodes.length) {
    const next = nodes.find(
      (node) => !placed.has(node.id) && node.dependsOn.every((id) => placed.has(id) || !ids.has(id)),
    );
    if (next === undefined) break; // a cycle: refused by graphProblems before this is called
    placed.add(next.id);
    ordered.push(next);
  }
  return ordered;
}

export function metaPlanProblems(plan: MetaPlan): string[] {
  return graphProblems(plan.parts, 'part');
}

export function partPlanProblems(plan: PartPlan): string[] {
  return graphProblems(plan.steps, 'step');
}

/**
 * Problems of an adjustment to a part whose steps `done` (attempted, whatever their outcome) have
 * run: a revised step may not take a done step's id, and may depend on done steps and on other
 * revised steps only.
 */
export function adjustmentProblems(adjustment: PlanAdjustment, done: readonly PlanStep[]): string[] {
  const doneIds = new Set(done.map((step) => step.id));
  const problems = adjustment.revisedSteps
    .filter((step) => doneIds.has(step.id))
    .map(
      (step) =>
        `Step "${step.id}" has already run; revisedSteps may only hold the steps that remain (new ids for new work).`,
    );
  return [...problems, ...graphProblems(adjustment.revisedSteps, 'step', doneIds)];
}
