import { z } from 'zod';

/**
 * What a refactor run stores (`runs.config`): its goal (null: the index-driven clean-up) and
 * whether a critic reviews every patch, the refactor settings it ran with and where they came
 * from (`settings`, for the record), its verifier commands, and the backup it made before
 * anything changed (which `ratchet refactor rollback` restores). Every key is optional: runs
 * recorded before one existed lack it.
 */
export const RefactorRunSettingsSchema = z.object({
  goal: z.string().nullable().optional(),
  critic: z.boolean().optional(),
  settings: z.unknown().optional(),
  commands: z.object({ fast: z.array(z.string()), full: z.array(z.string()) }).optional(),
  backup: z.object({ directory: z.string(), bundle: z.string().nullable(), snapshot: z.string() }).optional(),
});

export type RefactorRunSettings = z.infer<typeof RefactorRunSettingsSchema>;
