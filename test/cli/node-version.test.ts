import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../../src/cli/node-version.js';

describe('nodeVersionProblem', () => {
  it('accepts Node 22 and newer', () => {
    expect(nodeVersionProblem('v22.0.0')).toBeNull();
    expect(nodeVersionProblem('v24.21.0')).toBeNull();
    expect(nodeVersionProblem('v100.1.2')).toBeNull();
  });

  it('explains what to do on an older or unreadable version', () => {
    expect(nodeVersionProblem('v20.20.2')).toMatch(
      /needs Node\.js 22 or newer .* this is Node v20\.20\.2\.\nhint: install a current Node\.js/,
    );
    expect(nodeVersionProblem('v8.0.0')).toMatch(/needs Node\.js 22/);
    expect(nodeVersionProblem('nonsense')).toMatch(/this is Node nonsense/);
  });
});
