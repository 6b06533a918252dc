import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'

/** ajv-formats is CommonJS: its default export is the function under ESM and CommonJS alike. */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/**
 * Compiles every JSON Schema on its own, for tools' inputs and the structured content of their
 * results. A shared validator looks schemas up by `$id`: a tool whose schema has the `$id` of
 * another's (or of its own before a list change) would be checked against that one, and fail.
 */
export const SCHEMA_VALIDATOR: jsonSchemaValidator = {
  getValidator: (schema) => new AjvJsonSchemaValidator(createAjv()).getValidator(schema),
}

/**
 * Ajv as the SDK sets it up, but silent: a format it does not know (Pydantic's `path`) is
 * ignored as there, without a warning on the host's console.
 */
function createAjv(): Ajv {
  const ajv = new Ajv({
    strict: false,
    validateFormats: true,
    validateSchema: false,
    allErrors: true,
    logger: false,
  })
  addFormats(ajv)
  return ajv
}
