/** What every response shows in place of a stored secret. Sending it back keeps the stored value. */
export const SECRET_MASK = '********';
