/** Test command detection, per-test results, fingerprints and the deterministic gates. */
export { runCheck, type RunCheckOptions } from './checks.js';
export {
  detectFramework,
  detectTestCommand,
  readTestScript,
  type DetectedTestCommand,
  type DetectOptions,
  type Framework,
} from './detect.js';
export { DEFAULT_TEST_GLOBS, diffFingerprints, fingerprintFiles, type FingerprintDiff } from './fingerprint.js';
export { greenGate, redGate, verifyGate, type GateDecision, type GateRejectionReason } from './gates.js';
export { parseCargoText } from './parsers/cargo-text.js';
export type { ParsedTestOutput, ParseOptions } from './parsers/classify.js';
export { parseGoJson } from './parsers/go-json.js';
export { parseJestJson } from './parsers/jest-json.js';
export { parseJunitXml } from './parsers/junit-xml.js';
export { parsePytestText } from './parsers/pytest-text.js';
export { parseTap } from './parsers/tap.js';
export { parseUnittestText } from './parsers/unittest-text.js';
export { countTests, runTests, type RunTestsOptions } from './run-tests.js';
