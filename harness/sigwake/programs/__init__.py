"""The reproducers as built (Meson), packed for a guest (initramfs), and what each case says about itself
(the catalogue of facts, read from the programs)."""
