/** Click capture: token parsing, signed cookie, attribution, consent, the Fetch API handler. */
export {};
