import { cutText, redactCredentials } from '@kode/protocol'

/**
 * The fields of a thrown plain object shown when it has no `message`: what says which failure it
 * was. Any other field (`headers`, `config`, `request`, a token) may carry a credential, as an HTTP
 * library's error object often does, and its value is never shown: the text goes to the model and
 * into the history.
 */
const SHOWN_FIELDS = ['name', 'code', 'status', 'statusCode', 'type', 'errno'] as const
/** Most a shown field's text may take. */
const MAX_FIELD_CHARS = 200
/** Most other fields named. */
const MAX_NAMED_FIELDS = 10

/**
 * The text of a thrown value, never its stack: a string as it is, an `Error`'s message (its name
 * when the message is empty), a plain object's `message` or else its code and status (see
 * {@link plainObjectText}) rather than `[object Object]`, anything else through `String`.
 *
 * Credentials in it are redacted (`redactCredentials`): the text goes to the model, to the history
 * and to every watcher, and a host's or an SDK's error message may quote a key or a header.
 *
 * Never throws: tools, stores, hooks and listeners may throw anything (a null-prototype object, a
 * value whose `toString` or `message` getter throws), and the failure must still be reported.
 * Such a value reads as `unshowable(kind)`, `kind` saying what it was (`an object without a
 * prototype`); by default `<kind> that cannot be shown as text`.
 */
export function thrownText(error: unknown, unshowable: (kind: string) => string = cannotBeShown): string {
  return redactCredentials(rawText(error, unshowable))
}

function rawText(error: unknown, unshowable: (kind: string) => string): string {
  try {
    if (typeof error === 'string') return error
    if (error instanceof Error) {
      const { message, name } = error
      if (typeof message === 'string' && message !== '') return message
      return typeof name === 'string' && name !== '' ? name : 'Error'
    }
    const text = String(error)
    return text === '[object Object]' ? plainObjectText(error as object) : text
  } catch {
    return unshowable(thrownKind(error))
  }
}

function cannotBeShown(kind: string): string {
  return `${kind} that cannot be shown as text`
}

/**
 * A plain object some libraries throw instead of an `Error`: its `message` when it has one, else
 * the JSON of its {@link SHOWN_FIELDS} that hold a string, number or boolean (`{"status":401}`),
 * followed by the names, never the values, of its other fields
 * (`(other fields not shown: headers)`).
 */
function plainObjectText(error: object): string {
  const { message } = error as { message?: unknown }
  if (typeof message === 'string' && message !== '') return message
  const shown: Record<string, unknown> = {}
  const hidden: string[] = []
  for (const [name, value] of Object.entries(error)) {
    if ((SHOWN_FIELDS as readonly string[]).includes(name) && isScalar(value)) {
      shown[name] = typeof value === 'string' ? cutText(value, MAX_FIELD_CHARS + 1) : value
    } else hidden.push(name)
  }
  const json = JSON.stringify(shown)
  if (hidden.length === 0) return json
  const names = hidden.slice(0, MAX_NAMED_FIELDS).map((name) => cutText(name, 41))
  const list = `${names.join(', ')}${hidden.length > MAX_NAMED_FIELDS ? ', …' : ''}`
  return json === '{}' ? `an object (fields not shown: ${list})` : `${json} (other fields not shown: ${list})`
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

function thrownKind(value: unknown): string {
  try {
    if (typeof value !== 'object' || value === null) return `a ${typeof value}`
    return Object.getPrototypeOf(value) === null ? 'an object without a prototype' : 'an object'
  } catch {
    return 'a value'
  }
}
