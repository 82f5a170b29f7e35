/**
 * A varied JavaScript/TypeScript fixture for comparing the oxc and tree-sitter extractors: every
 * declaration, import, export and call shape the extractors handle, in each JavaScript dialect.
 */
export const VARIED_SOURCES: Readonly<Record<string, string>> = {
  'src/service.ts': `#!/usr/bin/env node
/** Side effects only. */
import './polyfill.js';
import def, { a as b, type T } from './x.js';
import * as ns from 'node:path';
import type { Z } from "./z.js";
import other, * as everything from './other.js';
import q = require('q');

// A line comment doc.
export const LIMIT: number = 10, other2 = 'x';
let counter = 0;
var legacy;

/**
 * Adds.
 * @param a first
 */
export function add(a: number, b: number): number {
  counter++;
  return helper(a) + ns.join('a', 'b') + b;
}

function helper<T extends number>(value: T): T {
  return value;
}

/** Overloads. */
export function pick(value: string): string;
export function pick(value: number): number;
export function pick(value: unknown): unknown {
  return value;
}

export async function* stream(): AsyncGenerator<number> {
  yield await Promise.resolve(1);
}

export const arrow = async (x: number): Promise<number> => x * 2;
export const expression = function named(y: string) { return y.trim(); };
const notFunction = (0, helper)(1);

/** The service. */
@decorate()
export class Service<T> extends Base implements Runner {
  private readonly cache = new Map<string, T>();
  static instances = 0;

  /** Builds it. */
  constructor(private readonly name: string) {
    super(name);
    Service.instances++;
  }

  /** Runs. */
  @logged
  @timed({ label: 'run' })
  run(value: number): string {
    return this.format(add(value, 1)) + this.#secret() + super.toString();
  }

  private format(value: number): string {
    return String(value).padStart(3, '0');
  }

  protected handle = (event: Event): void => {
    this.cache?.clear();
    dispatch?.(event);
  };

  #secret(): string {
    return this.name;
  }

  get size(): number {
    return this.cache.size;
  }

  'quoted name'(): void {}
  [Symbol.iterator](): Iterator<T> {
    return this.cache.values() as Iterator<T>;
  }
  overloaded(): void;
  overloaded(value?: number): void {
    void value;
  }
}

export abstract class Shape {
  abstract area(): number;
  describe(): string {
    return \`area \${this.area()}\`;
  }
}

export interface Runner extends Base2 {
  run(value: number): string;
}

/** An alias. */
export type Pair<A, B> = [A, B];
type Local = { a: string };

export enum Color {
  Red,
  Green,
}
export const enum Flag { On = 1 }

export namespace Outer.Inner {
  export const value = 1;
}
declare module 'augmented' {
  interface Extra {
    x: number;
  }
}
declare global {
  interface Window {
    service: Service<unknown>;
  }
}
declare function ambient(x: number): void;
declare const configured: string;

export { helper, counter as count };
export { join as pathJoin, default as pathDefault } from 'node:path';
export * from './strings.js';
export * as strings from './strings.js';
export type { Local };
export {} from './side.js';

export default Service;

const lazy = await import('./lazy.js');
const dynamicPath = import(\`./\${name}.js\`);
program.option('-v, --verbose', 'more').requiredOption("--port <n>", 'port');
const tagged = sql\`select 1\`;
const raw = String.raw\`\\n\`;
new Service('x');
new ns.Thing();
factory()().method();
make().then((value) => value).catch(console.error);
chained
  .option('--spaced')
  .finally(() => undefined);
const text = 'ünïcödé 😀';
export function afterUnicode(): string {
  return text.normalize();
}
`,
  'src/default-function.ts': `export default function () {
  return 1;
}
`,
  'src/default-class.ts': `/** Doc. */
export default class Named {
  method(): void {}
}
`,
  'src/default-anonymous-class.ts': 'export default class {\n  method(): void {}\n}\n',
  'src/default-value.ts': 'export default { a: 1 };\n',
  'src/default-arrow.ts': 'export default (a: number) => a;\n',
  'src/export-assign.ts': 'function legacy(): void {}\nexport = legacy;\n',
  'src/umd.d.ts': `export as namespace MyLib;
/** Makes. */
export declare function make(options?: Options): Thing;
export default make;
export interface Options {
  /** Verbose. */
  verbose?: boolean;
}
declare class Thing {
  constructor();
  private hidden(): void;
  run(): void;
}
export declare const version: string;
declare namespace Nested {
  function inner(): void;
}
`,
  'src/declarations.d.mts': 'export declare function esm(value: string): string;\nexport type Id = string;\n',
  'src/component.tsx': `import React, { useState } from 'react';

/** A button. */
export function Button({ label }: { label: string }): JSX.Element {
  const [count, setCount] = useState(0);
  return <button onClick={() => setCount(count + 1)}>{label}</button>;
}

export const Card = ({ title }: { title: string }) => <div className="card">{title}</div>;
`,
  'src/legacy.js': `'use strict';
const path = require('path');
const { readFile } = require('fs');
const helpers = require('./helpers')();
const tool = require('./tool').default;

/** Exported the CommonJS way. */
exports.legacyAdd = function (a, b) {
  return path.join(a, b);
};
module.exports.other = (x) => x;
module.exports = { legacyAdd: exports.legacyAdd };
exports.count += 1;

function local() {
  return readFile('x', () => undefined);
}

class Widget {
  constructor() {
    this.ready = false;
  }
  render() {
    return local();
  }
}
`,
  'src/view.js': `import { h } from './h.js';

export function View(props) {
  return <div title={props.title}>{h('span')}</div>;
}

export class Panel {
  show() {
    return View({ title: 'x' });
  }
}
`,
  'src/module.mjs': `import fs from 'node:fs';
export const read = (file) => fs.readFileSync(file, 'utf8');
export default async function main() {
  const config = await import('./config.mjs');
  return read(config.path);
}
`,
  'src/script.cjs': `const os = require('node:os');
function platform() {
  return os.platform();
}
module.exports = platform;
`,
  'src/component.jsx': `export const Item = ({ name }) => <li>{name}</li>;\n`,
  'src/values.cts':
    "import fs = require('fs');\nexport const size = (file: string): number => fs.statSync(file).size;\n",
};
