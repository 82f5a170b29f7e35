/**
 * A recoverable tool failure: the path is not allowed, the file is missing, the edit did not
 * match. The tool loop never lets it escape; it becomes an error tool result (`isError: true`)
 * whose text is the message, so the message must tell the model what to do instead.
 */
export class ToolError extends Error {
  override readonly name = 'ToolError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** True for a `ToolError` (a failure meant for the model, not for the caller). */
export function isToolError(error: unknown): error is ToolError {
  return error instanceof ToolError;
}
