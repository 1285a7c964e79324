// A reproducer that exits 0 without printing a single line.
int main() { return 0; }
