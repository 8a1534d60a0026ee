/** The root layout of the example shop. */
import type { ReactNode } from 'react';

export const metadata = { title: 'Next shop' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
