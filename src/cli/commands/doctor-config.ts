/**
 * The configuration `ratchet doctor` checks with. A provider without a model (`--provider
 * ollama` without `--model`) is one failing check with its fix: the other checks still run on
 * the rest of the configuration, instead of the whole report stopping at it.
 */
import { isRatchetError } from '../../core/errors.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { EndpointCheck } from '../../llm/endpoint-checks.js';
import { configFor, type ProviderFlags } from '../context.js';

/** The rule doctor reports as its own check (see `config/rules.ts`). */
const MISSING_MODEL_RULE = 'provider-needs-explicit-model';

export interface DoctorConfig {
  config: ResolvedConfig;
  /** The failing `model` check when no model is named (then `config.provider.model` is only the default, not used). */
  missingModel: EndpointCheck | null;
}

/** Throws what `configFor` throws, except a missing model alone. */
export async function doctorConfig(repoRoot: string, flags: ProviderFlags): Promise<DoctorConfig> {
  try {
    return { config: await configFor(repoRoot, flags), missingModel: null };
  } catch (error) {
    if (!isRatchetError(error, 'config') || error.details?.rule !== MISSING_MODEL_RULE) throw error;
    // Any other problem of the configuration still throws here.
    const config = await configFor(repoRoot, flags, { skipRules: [MISSING_MODEL_RULE] });
    return {
      config,
      missingModel: {
        name: 'model',
        status: 'fail',
        detail: `${config.provider.name} has no default model, and none is configured`,
        ...(error.hint === undefined ? {} : { hint: error.hint }),
      },
    };
  }
}
