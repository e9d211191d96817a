print("cued-carousel: not yet")
