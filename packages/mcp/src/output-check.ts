import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { SCHEMA_VALIDATOR } from './schema-validator.js'
import type { CallResult } from './tool-result.js'

/**
 * Checks a tool's result against its `outputSchema`, as the SDK's `callTool` does for the tools
 * `listTools` read (which Kode reads itself, see `readTool`): a result that is not an error must
 * carry `structuredContent`, and that must match. An error result is not checked (the SDK checks
 * its `structuredContent` too, though its own comment says it does not). The schema is compiled on first use, on its own
 * (see `SCHEMA_VALIDATOR`); one Ajv cannot compile leaves results unchecked, as an input schema
 * that does not compile leaves arguments to the server; so does one whose repair made it compile
 * (`matches` false, see `repairSchema`). Throws an `McpError` as the SDK would.
 */
export function createOutputCheck(
  toolName: string,
  schema: Record<string, unknown> | undefined,
  options: { matches: boolean } = { matches: true },
): (result: CallResult) => void {
  if (schema === undefined) return () => undefined
  let check: ((value: unknown) => string | undefined) | undefined
  return (result) => {
    // An error result need not follow the schema, and failing it would hide the server's error
    // from the model behind a complaint about the schema.
    if (result.isError === true) return
    if (result.structuredContent === undefined || result.structuredContent === null) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Tool ${toolName} has an output schema but did not return structured content`,
      )
    }
    check ??= options.matches ? compile(schema) : () => undefined
    const mismatch = check(result.structuredContent)
    if (mismatch !== undefined) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Structured content does not match the tool's output schema: ${mismatch}`,
      )
    }
  }
}

/** The check of a schema: what is wrong with a value, `undefined` when it matches or cannot be checked. */
function compile(schema: Record<string, unknown>): (value: unknown) => string | undefined {
  try {
    const validate = SCHEMA_VALIDATOR.getValidator(schema as never)
    return (value) => {
      const result = validate(value)
      return result.valid ? undefined : (result.errorMessage ?? 'it does not match')
    }
  } catch {
    return () => undefined
  }
}
