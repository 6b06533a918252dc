import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { Ajv, type Options } from 'ajv'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

/** ajv-formats is CommonJS: its default export is the function under ESM and CommonJS alike. */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/**
 * Compiles every JSON Schema on its own, for tools' inputs and the structured content of their
 * results. A shared validator looks schemas up by `$id`: a tool whose schema has the `$id` of
 * another's (or of its own before a list change) would be checked against that one, and fail.
 */
export const SCHEMA_VALIDATOR: jsonSchemaValidator = {
  getValidator: (schema) => new AjvJsonSchemaValidator(createAjv(schema)).getValidator(schema),
}

/**
 * Ajv as the SDK sets it up, but silent: a format it does not know (Pydantic's `path`) is
 * ignored as there, without a warning on the host's console. And by the dialect the schema
 * names: draft-07's rules would read a 2020-12 schema's `items` (the items after `prefixItems`)
 * as applying to every item, and refuse arguments that match it. A schema naming none is read as
 * draft-07, as the SDK reads it (servers' older tuple form, `items` as a list, needs that).
 */
function createAjv(schema: unknown): Ajv {
  const options: Options = {
    strict: false,
    validateFormats: true,
    validateSchema: false,
    allErrors: true,
    logger: false,
  }
  const ajv = new (ajvClass(schema))(options)
  addFormats(ajv)
  return ajv
}

function ajvClass(schema: unknown): typeof Ajv {
  const dialect = (schema as { $schema?: unknown } | null)?.$schema
  if (typeof dialect !== 'string') return Ajv
  // `http` or `https`, with or without the empty fragment.
  const uri = dialect.replace(/^http:/, 'https:').replace(/#$/, '')
  if (uri === 'https://json-schema.org/draft/2020-12/schema') return Ajv2020 as unknown as typeof Ajv
  if (uri === 'https://json-schema.org/draft/2019-09/schema') return Ajv2019 as unknown as typeof Ajv
  return Ajv
}
