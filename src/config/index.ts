/** Public API of the config layer: `.ratchet/config.toml` + env + flags, and prompts. */
export {
  loadConfig,
  parseConfigText,
  resolveProjectRoot,
  resolveRatchetHome,
} from "./load.js";
export type { ConfigEnv, ConfigFlags, LoadConfigOptions } from "./load.js";
export { stageKey, stageSettings } from "./resolved.js";
export type {
  ConfigOrigin,
  ResolvedConfig,
  StageOverride,
  StageSettings,
} from "./resolved.js";
export { CONFIG_RULES, checkConfigRules } from "./rules.js";
export type { ConfigProblem, ConfigRule } from "./rules.js";
export {
  ConfigFileSchema,
  DEFAULT_MODEL,
  DEFAULT_TEST_PATTERNS,
  PROVIDER_NAMES,
  REFACTOR_MODES,
  STAGE_KEYS,
  defaultConfigFile,
} from "./schema.js";
export type {
  ConfigFile,
  ConfigFileInput,
  ProviderName,
  RefactorMode,
  StageKey,
} from "./schema.js";
export { configPath, renderDefaultConfig } from "./write-default.js";
export type { DefaultConfigOptions } from "./write-default.js";
export {
  PROMPT_VARIABLES,
  loadPrompts,
  packagePromptsPath,
  packageRoot,
  promptText,
  renderStagePrompt,
  renderTemplate,
  repoPromptsPath,
  stagePrompt,
} from "./prompts.js";
export type {
  PromptSet,
  PromptTree,
  PromptVariable,
  StagePrompt,
} from "./prompts.js";
