"""How a recorded case reads against what is known of kernels (the one judgement every report and command
takes), how a case differs between two kernels, and how flavours differ from their generic twin."""
