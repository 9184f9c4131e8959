int tc_floordiv(int a, int b) { if (b == 0) return 0; int q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }
int tc_floormod(int a, int b) { if (b == 0) return 0; int r = a - (a / b) * b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }

