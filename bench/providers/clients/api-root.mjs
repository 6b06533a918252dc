/**
 * The API root a client is pointed at for `wire` in `scenario`, shaped like the real default
 * (`https://api.openai.com/v1`, `https://api.anthropic.com/v1`,
 * `https://generativelanguage.googleapis.com/v1beta`), so each client appends its usual path.
 */
export function apiRoot(origin, scenario, wire) {
  return `${origin}/${scenario}/${wire === 'google' ? 'v1beta' : 'v1'}`
}
