/** Thaw's version, stored in every migration record (checked against deno.json by a test). */
export const VERSION = "0.1.0";
