/** Most a plain object's JSON may take of the text: the model and the host read it. */
const MAX_OBJECT_CHARS = 1000

/**
 * The text of a thrown value, never its stack: a string as it is, an `Error`'s message (its name
 * when the message is empty), a plain object's `message` or else its JSON (cut at
 * {@link MAX_OBJECT_CHARS}) rather than `[object Object]`, anything else through `String`.
 *
 * Never throws: tools, stores, hooks and listeners may throw anything (a null-prototype object, a
 * value whose `toString` or `message` getter throws), and the failure must still be reported.
 * Such a value reads as `unshowable(kind)`, `kind` saying what it was (`an object without a
 * prototype`); by default `<kind> that cannot be shown as text`.
 */
export function thrownText(error: unknown, unshowable: (kind: string) => string = cannotBeShown): string {
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
 * A plain object some libraries throw instead of an `Error`: its `message` when it has one,
 * else its JSON (cut at {@link MAX_OBJECT_CHARS}), rather than `[object Object]`.
 */
function plainObjectText(error: object): string {
  const { message } = error as { message?: unknown }
  if (typeof message === 'string' && message !== '') return message
  const json = JSON.stringify(error)
  if (json === undefined) return '[object Object]'
  return json.length > MAX_OBJECT_CHARS ? `${json.slice(0, MAX_OBJECT_CHARS)}…` : json
}

function thrownKind(value: unknown): string {
  try {
    if (typeof value !== 'object' || value === null) return `a ${typeof value}`
    return Object.getPrototypeOf(value) === null ? 'an object without a prototype' : 'an object'
  } catch {
    return 'a value'
  }
}
