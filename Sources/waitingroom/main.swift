print("waitingroom")
