/**
 * The dependency graph of a tasks file, as pure functions over `{ key, dependsOn }`: the cycles
 * validation names, the layers tasks can run in, the order finished tasks merge in, and the tasks
 * a failure blocks. "A depends on B" is an edge A -> B. Dependencies on keys that are not in the
 * list are ignored here (validation reports them).
 */

interface GraphTask {
  key: string;
  dependsOn: readonly string[];
}

/**
 * Every dependency cycle, each as a closed path of keys (`['A', 'B', 'A']`: A depends on B,
 * which depends on A; `['A', 'A']`: A depends on itself). One cycle per strongly connected
 * component, starting at its task that comes first in the file, so the answer is stable.
 */
export function findCycles(tasks: readonly GraphTask[]): string[][] {
  const position = new Map(tasks.map((task, index) => [task.key, index]));
  const edges = new Map(
    tasks.map((task) => [task.key, task.dependsOn.filter((dependency) => position.has(dependency))]),
  );
  // Tarjan's strongly connected components; task lists are small, recursion is fine.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (key: string): void => {
    index.set(key, index.size);
    low.set(key, index.get(key) ?? 0);
    stack.push(key);
    onStack.add(key);
    for (const next of edges.get(key) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(key, Math.min(low.get(key) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) low.set(key, Math.min(low.get(key) ?? 0, index.get(next) ?? 0));
    }
    if (low.get(key) !== index.get(key)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== key);
    components.push(component);
  };
  for (const task of tasks) if (!index.has(task.key)) visit(task.key);

  const cycles: string[][] = [];
  for (const component of components) {
    const members = new Set(component);
    const start = [...component].sort((a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0))[0];
    if (start === undefined) continue;
    if (component.length === 1 && !(edges.get(start) ?? []).includes(start)) continue;
    cycles.push(pathBack(start, members, edges));
  }
  return cycles.sort((a, b) => (position.get(a[0] ?? '') ?? 0) - (position.get(b[0] ?? '') ?? 0));
}

/** A closed path from `start` back to itself within one strongly connected component. */
function pathBack(start: string, members: ReadonlySet<string>, edges: ReadonlyMap<string, string[]>): string[] {
  const seen = new Set<string>();
  const walk = (key: string, path: string[]): string[] | null => {
    for (const next of edges.get(key) ?? []) {
      if (next === start) return [...path, start];
      if (!members.has(next) || seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, next]);
      if (found !== null) return found;
    }
    return null;
  };
  return walk(start, [start]) ?? [start, start];
}

/**
 * The tasks in layers: the first holds the tasks without dependencies, each later one the tasks
 * whose dependencies are all in earlier layers; file order within a layer. Tasks of one layer can
 * run at the same time. Throws on a cycle (validate first).
 */
export function dependencyLayers(tasks: readonly GraphTask[]): string[][] {
  const known = new Set(tasks.map((task) => task.key));
  const placed = new Set<string>();
  const layers: string[][] = [];
  let remaining = [...tasks];
  while (remaining.length > 0) {
    const layer = remaining.filter((task) =>
      task.dependsOn.every((dependency) => placed.has(dependency) || !known.has(dependency)),
    );
    if (layer.length === 0)
      throw new Error(`The tasks ${remaining.map((task) => task.key).join(', ')} depend on each other in a cycle.`);
    for (const task of layer) placed.add(task.key);
    layers.push(layer.map((task) => task.key));
    remaining = remaining.filter((task) => !placed.has(task.key));
  }
  return layers;
}

/**
 * The order tasks merge into the run branch: layer by layer, file order within a layer. Merges
 * happen one at a time as tasks finish, so this is the tie-break among tasks finished together,
 * which makes the run branch's history the same however the workers' timing falls.
 */
export function mergeOrder(tasks: readonly GraphTask[]): string[] {
  return dependencyLayers(tasks).flat();
}

/**
 * The finished task to merge next: the first, in merge order, whose dependencies are all merged
 * (a task starts only once its dependencies are merged, so every finished task qualifies unless
 * the caller passes others). Undefined when none is waiting.
 */
export function nextMerge(
  order: readonly string[],
  tasks: ReadonlyMap<string, GraphTask>,
  finished: ReadonlySet<string>,
  merged: ReadonlySet<string>,
): string | undefined {
  return order.find(
    (key) =>
      finished.has(key) &&
      !merged.has(key) &&
      (tasks.get(key)?.dependsOn ?? []).every((dependency) => merged.has(dependency) || !tasks.has(dependency)),
  );
}

/** Every task that depends on `key`, directly or through others, in file order. */
export function dependentsOf(tasks: readonly GraphTask[], key: string): string[] {
  const blocked = new Set<string>([key]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const task of tasks) {
      if (blocked.has(task.key)) continue;
      if (task.dependsOn.some((dependency) => blocked.has(dependency))) {
        blocked.add(task.key);
        grew = true;
      }
    }
  }
  return tasks.map((task) => task.key).filter((candidate) => candidate !== key && blocked.has(candidate));
}
