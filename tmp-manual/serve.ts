import { startFakeAnthropicServer } from '../test/support/fake-anthropic-server.js';
import { refactorBrain } from '../test/support/refactor-js-fixture.js';
const server = await startFakeAnthropicServer({ apiKey: 'sk-manual' });
server.setFallback(refactorBrain);
console.log(server.url);
await new Promise(() => undefined);
