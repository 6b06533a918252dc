import type { WireRequest } from '../adapter/spec.js'
import { JsonText } from './json-text.js'

/**
 * The request with the host's provider-specific fields over the adapter's (see
 * `LLMRequest.providerOptions`). A field whose value and the adapter's are both plain objects is
 * merged into the adapter's, depth by depth, so an option inside an object the adapter fills
 * (Gemini `generationConfig.topP`, Responses `text.verbosity`) keeps what the adapter put there:
 * the token limit, the thinking config, the response schema. Any other value (an array, a
 * string, `undefined` to remove the field) replaces the adapter's.
 */
export function withProviderOptions(
  wire: WireRequest,
  options: Readonly<Record<string, unknown>> | undefined,
): WireRequest {
  if (options === undefined) return wire
  const body = plainBody(wire)
  if (body === undefined) return wire
  return { ...wire, body: mergeFields(body, options) }
}

/**
 * The request with the tools the provider runs itself (see `LLMRequest.providerTools`) added to
 * the body's `tools` array, after the function tools the adapter declared. Every built-in api
 * declares tools in a top-level `tools` array (Gemini's holds one `functionDeclarations` entry,
 * beside which `{ codeExecution: {} }` or `{ googleSearch: {} }` go), so one rule serves them all.
 * A value that is not a list of objects is refused: it would reach the provider as a 400.
 */
export function withProviderTools(wire: WireRequest, tools: readonly unknown[] | undefined): WireRequest {
  if (tools === undefined) return wire
  if (!Array.isArray(tools) || !tools.every(isPlainObject))
    throw new TypeError('providerTools must list each tool as an object, as the api takes it')
  if (tools.length === 0) return wire
  const body = plainBody(wire)
  if (body === undefined) return wire
  const declared = body.tools instanceof JsonText ? body.tools.toJSON() : body.tools
  const list = Array.isArray(declared) ? [...declared, ...tools] : [...tools]
  return { ...wire, body: { ...body, tools: list } }
}

/**
 * The body's fields, to add to: a body given whole as JSON text is read back (a field given as
 * text stays so). `undefined` for a body that is no object of fields.
 */
function plainBody(wire: WireRequest): Record<string, unknown> | undefined {
  const body = wire.body instanceof JsonText ? wire.body.toJSON() : wire.body
  return isPlainObject(body) ? body : undefined
}

function mergeFields(base: Record<string, unknown>, over: Readonly<Record<string, unknown>>) {
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const current = Object.hasOwn(base, key) ? base[key] : undefined
    const merged = isPlainObject(current) && isPlainObject(value) ? mergeFields(current, value) : value
    // Defined, not assigned: a `__proto__` key from parsed JSON stays a field of the body.
    Object.defineProperty(out, key, { value: merged, enumerable: true, writable: true, configurable: true })
  }
  return out
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
