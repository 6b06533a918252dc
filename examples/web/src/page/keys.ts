/**
 * Whether a keydown is an Enter that does something: not one that ends an input method's
 * composition (Japanese, Chinese, ...), which picks the composed text. Safari ends the composition
 * first and marks that Enter with key code 229 only.
 */
export function isPlainEnter(event: KeyboardEvent): boolean {
  return event.key === 'Enter' && !event.shiftKey && !event.isComposing && event.keyCode !== 229
}
