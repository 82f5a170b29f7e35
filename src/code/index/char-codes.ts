/**
 * UTF-16 code units the index's text scanners compare with `charCodeAt` (doc comments,
 * signatures, ambient declarations): named once for every scanner.
 */
export const TAB = 9;
export const LINE_FEED = 10;
export const CARRIAGE_RETURN = 13;
export const SPACE = 32;
export const HASH = 35;
export const STAR = 42;
export const SLASH = 47;
export const COLON = 58;
export const SEMICOLON = 59;
export const EQUALS = 61;
export const GREATER = 62;
export const LOWER_D = 100;
export const OPEN_BRACE = 123;
export const LINE_SEPARATOR = 0x2028;
export const PARAGRAPH_SEPARATOR = 0x2029;
