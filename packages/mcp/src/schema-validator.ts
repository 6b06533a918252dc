import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'

/**
 * Compiles every JSON Schema on its own, for tools' inputs and the structured content of their
 * results. A shared validator looks schemas up by `$id`: a tool whose schema has the `$id` of
 * another's (or of its own before a list change) would be checked against that one, and fail.
 */
export const SCHEMA_VALIDATOR: jsonSchemaValidator = {
  getValidator: (schema) => new AjvJsonSchemaValidator().getValidator(schema),
}
