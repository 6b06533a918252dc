import type { ResponseFormat } from '../../types.js'

/**
 * A structured-output request as OpenAI's `json_schema` fields (`name`, `description`, `schema`,
 * `strict`): Chat Completions nests them under `response_format.json_schema`, Responses puts them
 * beside `type` in `text.format`. `strict` is always sent, so the wire says which mode was asked.
 */
export function jsonSchemaFormat(format: ResponseFormat): Record<string, unknown> {
  const out: Record<string, unknown> = { name: format.name }
  if (format.description !== undefined) out.description = format.description
  out.schema = format.schema
  out.strict = format.strict === true
  return out
}
